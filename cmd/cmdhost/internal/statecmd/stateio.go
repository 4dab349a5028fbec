package statecmd

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/bytesize"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The keys of a namespace as state list shows them, and as the JSON
// lines of export and import carry them: one admin.StateItem a line,
// {key or keyBase64, value or valueBase64, version, expires}.

// printNamespaces writes state namespaces' table and totals.
func printNamespaces(w io.Writer, all admin.StateNamespaces) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKEYS\tBYTES")
	for _, ns := range all.Namespaces {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", base.Shown(ns.Namespace), ns.Keys, ns.Bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s, %s, %s of the store's %s\n", nouns(int64(len(all.Namespaces)), "namespace"), nouns(all.Keys, "key"), bytesize.Human(all.Bytes), bytesize.Human(all.MaxBytes))
	return err
}

// eachKey lists the keys of ns that start with prefix, page after page,
// at most limit (0: all), with their values when values, and hands each
// to f.
func eachKey(c *cli.Context, st stateStore, ns, prefix string, limit int, values bool, f func(admin.StateItem) error) error {
	req := admin.StateListRequest{Namespace: ns, Prefix: prefix, Values: values}
	n := 0
	for {
		if limit > 0 {
			req.Limit = min(limit-n, admin.MaxStatePage)
		}
		page, err := st.list(c.Context, req)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := f(it); err != nil {
				return err
			}
		}
		n += len(page.Items)
		if !page.More || len(page.Items) == 0 || limit > 0 && n >= limit {
			return nil
		}
		last := page.Items[len(page.Items)-1].StateKey
		req.After = &last
	}
}

// runList prints the keys of ns: a table, or with --json an array.
func runList(c *cli.Context, ns string) error {
	st, err := openState(c, false)
	if err != nil {
		return err
	}
	defer st.close()
	w := c.App.Writer
	if c.Bool("json") {
		// An array written as it comes: a namespace may hold 100,000 keys.
		sep := "["
		err := eachKey(c, st, ns, c.String("prefix"), c.Int("limit"), false, func(it admin.StateItem) error {
			b, err := json.Marshal(it)
			if err == nil {
				_, err = fmt.Fprintf(w, "%s%s", sep, b)
			}
			sep = ","
			return err
		})
		if err != nil {
			return err
		}
		if sep == "[" {
			_, err = fmt.Fprintln(w, "[]")
		} else {
			_, err = fmt.Fprintln(w, "]")
		}
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tBYTES\tVERSION\tEXPIRES")
	err = eachKey(c, st, ns, c.String("prefix"), c.Int("limit"), false, func(it admin.StateItem) error {
		key := base.Shown(it.Key)
		if it.KeyBase64 != nil {
			key = "base64:" + base64.StdEncoding.EncodeToString(it.KeyBase64)
		}
		expires := "-"
		if !it.Expires.IsZero() {
			expires = it.Expires.Local().Format(time.RFC3339)
		}
		_, err := fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", key, it.ValueBytes, it.Version, expires)
		return err
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func stateExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a namespace's keys as JSON lines, for state import",
		ArgsUsage: "NAMESPACE",
		Description: "One JSON object a line, a key each, in byte order: key (text) or keyBase64, value\n" +
			"(text) or valueBase64, version, expires (RFC 3339, when it expires). The count goes to\n" +
			"stderr.",
		Flags: stateFlagsOf(true, false, false, &cli.StringFlag{Name: "prefix", Usage: "only the keys that start with `P`"}),
		Action: func(c *cli.Context) error {
			ns, _, err := stateArgs(c, "cmdhost state export NAMESPACE > FILE.jsonl", 0, 0)
			if err != nil {
				return err
			}
			st, err := openState(c, false)
			if err != nil {
				return err
			}
			defer st.close()
			out := bufio.NewWriter(c.App.Writer)
			n := 0
			err = eachKey(c, st, ns, c.String("prefix"), 0, true, func(it admin.StateItem) error {
				n++
				return base.WriteJSONLine(out, it)
			})
			if ferr := out.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "exported %s of %s\n", nouns(int64(n), "key"), ns)
			return nil
		},
	}
}

// Bounds of an import's input: a line holds one key, whose value is at
// most 1 MiB (base64 makes it 1.4 MiB, JSON's escapes of control
// characters up to 6 MiB), and the whole input is held in memory while
// it is checked, before anything is written.
const (
	maxImportLine  = 8 << 20
	maxImportBytes = 1 << 30
)

func stateImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "set a namespace's keys from JSON lines, as export writes them",
		ArgsUsage: "NAMESPACE",
		Description: "Reads standard input (or -f FILE): one JSON object a line, as export writes them\n" +
			"(version ignored: each write gets its own; a key that has expired is left out). Every\n" +
			"line is checked before anything is written: a line that is not such an object, a key\n" +
			"or value over the store's bounds or a key given twice is an error naming the line,\n" +
			"exit status 1, and nothing is written. Then the keys are set in commits of up to\n" +
			"1,000 keys and 8 MiB, each all or none: a commit the store refuses (a namespace full)\n" +
			"says which lines it held and how many were imported before it.",
		Flags: stateFlagsOf(true, true, true,
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read `FILE` instead of standard input"}),
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	ns, _, err := stateArgs(c, "cmdhost state import NAMESPACE < FILE.jsonl", 0, 0)
	if err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	if f := c.String("file"); f != "" && f != "-" {
		file, err := os.Open(f)
		if err != nil {
			return cli.Exit(fmt.Sprintf("-f: %v", err), base.ExitUsage)
		}
		defer file.Close()
		in = file
	}
	items, lines, err := readImport(in, state.Limits{}.WithDefaults())
	if err != nil {
		return cli.Exit(err, base.ExitFailed)
	}
	st, err := openState(c, true)
	if err != nil {
		return err
	}
	defer st.close()
	starts, err := st.batches(items)
	if err != nil {
		return err
	}
	var done admin.StateImported
	for i, start := range starts {
		end := len(items)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		res, err := st.importBatch(c.Context, ns, items[start:end])
		if err != nil {
			return cli.Exit(fmt.Sprintf("lines %d to %d not imported, nothing of them written: %v; %s imported before them, in %s",
				lines[start], lines[end-1], err, nouns(int64(done.Keys), "key"), nouns(int64(i), "commit")), base.ExitFailed)
		}
		done.Keys += res.Keys
		done.Expired += res.Expired
	}
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, done)
	}
	_, err = fmt.Fprintf(c.App.Writer, "imported %s into %s in %s (%d expired, left out)\n", nouns(int64(done.Keys), "key"), ns, nouns(int64(len(starts)), "commit"), done.Expired)
	return err
}

// readImport reads and checks every line of an import: the items, and
// the line number of each. An error names the line.
func readImport(in io.Reader, limits state.Limits) ([]admin.StateItem, []int, error) {
	sc := bufio.NewScanner(io.LimitReader(in, maxImportBytes+1))
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	var items []admin.StateItem
	var lines []int
	first := map[string]int{} // each key's line
	n, total := 0, 0
	for sc.Scan() {
		n++
		total += len(sc.Bytes()) + 1
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		it, key, err := importItem(line, limits)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w; nothing was imported", n, err)
		}
		if at, dup := first[string(key)]; dup {
			return nil, nil, fmt.Errorf("line %d: key %s again (line %d has it); nothing was imported", n, keyShown(key), at)
		}
		first[string(key)] = n
		items, lines = append(items, it), append(lines, n)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, nil, fmt.Errorf("line %d: longer than %d MiB, more than a key and its value can be; nothing was imported", n+1, maxImportLine>>20)
	case err != nil:
		return nil, nil, fmt.Errorf("reading the import: %w; nothing was imported", err)
	case total > maxImportBytes:
		return nil, nil, fmt.Errorf("more than %d GiB to import: split it; nothing was imported", maxImportBytes>>30)
	}
	return items, lines, nil
}

// importItem reads one line of an import, checked against limits.
func importItem(line []byte, limits state.Limits) (admin.StateItem, []byte, error) {
	var it admin.StateItem
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&it); err != nil {
		return it, nil, fmt.Errorf(`not a key as export writes it, {"key":"K","value":"V"}: %v`, err)
	}
	if dec.More() {
		return it, nil, errors.New("more than one JSON object: one key a line")
	}
	key, err := it.StateKey.Bytes()
	if err != nil {
		return it, nil, err
	}
	value, err := it.StateValue.Bytes()
	switch {
	case err != nil:
		return it, nil, err
	case len(key) > limits.MaxKeyBytes:
		return it, nil, fmt.Errorf("a key of %d bytes, over the bound of %d", len(key), limits.MaxKeyBytes)
	case len(value) > limits.MaxValueBytes:
		return it, nil, fmt.Errorf("a value of %d bytes, over the bound of %d", len(value), limits.MaxValueBytes)
	}
	return it, key, nil
}

// nouns is "1 key", "2 keys".
func nouns(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
