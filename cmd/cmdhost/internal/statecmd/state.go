package statecmd

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/state"
)

// `cmdhost state`: the handlers' state store (docs/state.md, "Operating
// the store"), offline on its folder (--state-dir, or --plugins for the
// folder serve keeps beside it) or through the running host that holds
// it (--executor, its admin state ops). Each subcommand is written once,
// against stateStore (statestore.go); the JSON lines of export and
// import are stateio.go's.

func StateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "list, read, write, export and import the keys of the handlers' state store",
		Description: "Offline on the store's folder (--state-dir DIR, or --plugins DIR for the folder serve\n" +
			"keeps beside it), which no host may hold then; or through the running host that holds\n" +
			"it (--executor ID), whose admin token (--token-file) every subcommand but namespaces\n" +
			"needs. A namespace is a plugin's, plugin/NAME (or --plugin NAME), a shared one,\n" +
			"shared/NAME, or aio, the Azure IoT Operations state store protocol's other keys.\n" +
			"Exit status 1 when the store or the host refuses (no such key, a condition that does\n" +
			"not hold, a bound, a missing token), 2 for a command line cmdhost cannot use; through\n" +
			"a host, 3, 4, 6 and 7 as for invoke.",
		Subcommands: []*cli.Command{
			stateNamespacesCommand(), stateListCommand(), stateGetCommand(), stateSetCommand(),
			stateDeleteCommand(), stateExportCommand(), stateImportCommand(),
		},
	}
}

// stateFlagsOf are the flags of a state subcommand: its own, the
// namespace's --plugin (ns), --json (json), where the store is, and the
// bounds offline writes keep to (bounds).
func stateFlagsOf(ns, json, bounds bool, own ...cli.Flag) []cli.Flag {
	flags := own
	if ns {
		flags = append(flags, &cli.StringFlag{Name: "plugin", Usage: "the namespace of plugin `NAME` (plugin/NAME), in place of the NAMESPACE argument"})
	}
	if json {
		flags = append(flags, &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"})
	}
	flags = append(flags,
		&cli.StringFlag{Name: "state-dir", Usage: "the state store's `DIR`, opened offline (no host may hold it)", EnvVars: []string{"CMDHOST_STATE_DIR"}},
		&cli.StringFlag{Name: "plugins", Usage: "the plugins `DIR` of the host: its state store (the path with .state appended) opened offline, its operator files bounding their plugins' namespaces", EnvVars: []string{"CMDHOST_PLUGINS"}})
	flags = append(flags, hostconn.TargetFlags("with --executor: MQTT broker `URL`", "go through the running host of this executor `ID` (serve --id), which holds the store")...)
	flags = append(flags, hostconn.TokenFlags()...)
	flags = append(flags, &cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "with --executor: how long to wait for the host, each request"})
	if bounds { // serve's bounds, by the same names and variables: a host keeps to its own
		flags = append(flags,
			base.SizeFlag("state-max-bytes", state.DefaultMaxTotalBytes, "offline: the store's bound of keys and values, as serve's", "CMDHOST_STATE_MAX_BYTES"),
			base.SizeFlag("state-namespace-bytes", state.DefaultNamespaceBytes, "offline: a namespace's bound of bytes unless its plugin's operator file (--plugins) sets one, as serve's", "CMDHOST_STATE_NAMESPACE_BYTES"),
			&cli.Int64Flag{Name: "state-namespace-keys", Value: state.DefaultNamespaceKeys, Usage: "offline: a namespace's bound of keys unless its plugin's operator file (--plugins) sets one, as serve's", EnvVars: []string{"CMDHOST_STATE_NAMESPACE_KEYS"}})
	}
	return flags
}

// stateArgs are a subcommand's arguments: the namespace (the first
// argument, or --plugin) and the n arguments after it; at most max of
// them (n ≤ max).
func stateArgs(c *cli.Context, usage string, n, max int) (ns string, rest []string, err error) {
	args := c.Args().Slice()
	if p := c.String("plugin"); p != "" {
		ns = state.PluginNamespace(p)
	} else if len(args) > 0 {
		ns, args = args[0], args[1:]
	} else {
		return "", nil, cli.Exit(fmt.Sprintf("name the namespace: %s (or --plugin NAME for plugin/NAME)", usage), base.ExitUsage)
	}
	if len(args) < n || len(args) > max {
		return "", nil, cli.Exit(fmt.Sprintf("%d arguments after the namespace: %s", len(args), usage), base.ExitUsage)
	}
	if _, err := admin.CheckNamespace(ns); err != nil {
		return "", nil, cli.Exit(err.Error()+"; --plugin NAME names plugin/NAME", base.ExitUsage)
	}
	return ns, args, nil
}

// stateKey is a KEY argument: its text, or with --base64-key its bytes.
func stateKey(c *cli.Context, arg string) ([]byte, error) {
	if !c.Bool("base64-key") {
		return []byte(arg), nil
	}
	k, err := base64.StdEncoding.DecodeString(arg)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("--base64-key: KEY %q is not base64: %v", arg, err), base.ExitUsage)
	}
	return k, nil
}

// openForKey reads the NAMESPACE KEY arguments of get or delete and
// opens the store. Close it.
func openForKey(c *cli.Context, usage string) (st stateStore, ns string, key []byte, err error) {
	ns, args, err := stateArgs(c, usage, 1, 1)
	if err != nil {
		return nil, "", nil, err
	}
	if key, err = stateKey(c, args[0]); err != nil {
		return nil, "", nil, err
	}
	if st, err = openState(c, false); err != nil {
		return nil, "", nil, err
	}
	return st, ns, key, nil
}

func base64KeyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "base64-key", Usage: "KEY is the key's bytes in base64 (a key that is not text, as list and export show it)"}
}

func stateNamespacesCommand() *cli.Command {
	return &cli.Command{
		Name:  "namespaces",
		Usage: "list the state store's namespaces with their keys and bytes",
		Flags: stateFlagsOf(false, true, false),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit("namespaces takes no argument: cmdhost state namespaces", base.ExitUsage)
			}
			return runNamespaces(c)
		},
	}
}

func runNamespaces(c *cli.Context) error {
	st, err := openState(c, false)
	if err != nil {
		return err
	}
	defer st.close()
	all, err := st.namespaces(c.Context)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, all)
	}
	return printNamespaces(c.App.Writer, all)
}

func stateListCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list a namespace's keys (without NAMESPACE: the namespaces)",
		ArgsUsage: "[NAMESPACE]",
		Description: "Shows each key with its value's size, its version and when it expires, in byte\n" +
			"order; a key that is not text is shown as base64:… (give it to get with --base64-key).",
		Flags: stateFlagsOf(true, true, false,
			&cli.StringFlag{Name: "prefix", Usage: "only the keys that start with `P`"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` keys", DefaultText: "all"}),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 && c.String("plugin") == "" {
				return runNamespaces(c)
			}
			ns, _, err := stateArgs(c, "cmdhost state list [NAMESPACE]", 0, 0)
			if err != nil {
				return err
			}
			if c.Int("limit") < 0 {
				return cli.Exit("--limit must not be negative", base.ExitUsage)
			}
			return runList(c, ns)
		},
	}
}

func stateGetCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "print a key's value",
		ArgsUsage: "NAMESPACE KEY",
		Description: "Prints the value as it is (a newline after it on a terminal only); --json prints\n" +
			"{key, value (text) or valueBase64, version, expires}. No such key: exit status 1.",
		Flags: stateFlagsOf(true, true, false, base64KeyFlag()),
		Action: func(c *cli.Context) error {
			st, ns, key, err := openForKey(c, "cmdhost state get NAMESPACE KEY")
			if err != nil {
				return err
			}
			defer st.close()
			it, err := st.get(c.Context, ns, key)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return base.WriteJSONLine(c.App.Writer, it)
			}
			value, _ := it.StateValue.Bytes()
			return base.WritePayload(c.App.Writer, value)
		},
	}
}

func stateSetCommand() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "set a key (one commit)",
		ArgsUsage: "NAMESPACE KEY [VALUE]",
		Description: "The value is VALUE, or the content of -f FILE (- for standard input). Prints the\n" +
			"key's new version, which --if-version takes. A condition that does not hold writes\n" +
			"nothing: exit status 1.",
		Flags: stateFlagsOf(true, true, true, base64KeyFlag(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the value is the content of `FILE` (- for standard input)"},
			&cli.DurationFlag{Name: "ttl", Usage: "the key expires `DUR` after the commit", DefaultText: "never"},
			&cli.BoolFlag{Name: "if-absent", Usage: "set it only if the key does not exist"},
			&cli.Uint64Flag{Name: "if-version", Usage: "set it only if the key's version is `V`", DefaultText: "any"}),
		Action: runSet,
	}
}

func runSet(c *cli.Context) error {
	ns, args, err := stateArgs(c, "cmdhost state set NAMESPACE KEY [VALUE | -f FILE]", 1, 2)
	if err != nil {
		return err
	}
	key, err := stateKey(c, args[0])
	if err != nil {
		return err
	}
	var value []byte
	switch file := c.String("file"); {
	case file != "" && len(args) == 2:
		return cli.Exit("set takes the value as VALUE or -f FILE, not both", base.ExitUsage)
	case file != "":
		if value, err = readValue(c, file); err != nil {
			return err
		}
	case len(args) == 2:
		value = []byte(args[1])
	default:
		return cli.Exit("set needs a value: cmdhost state set NAMESPACE KEY VALUE (or -f FILE)", base.ExitUsage)
	}
	req := admin.StateSetRequest{Namespace: ns, StateKey: admin.KeyOf(key), StateValue: admin.ValueOf(value),
		IfAbsent: c.Bool("if-absent"), IfVersion: c.Uint64("if-version")}
	switch ttl := c.Duration("ttl"); {
	case ttl < 0 || c.IsSet("ttl") && ttl == 0:
		return cli.Exit("--ttl must be positive (leave it out for a key that never expires)", base.ExitUsage)
	case ttl > 0:
		req.TTL = ttl.String()
	}
	if req.IfAbsent && req.IfVersion != 0 {
		return cli.Exit("--if-absent and --if-version: a key cannot be both absent and of a version", base.ExitUsage)
	}
	st, err := openState(c, true)
	if err != nil {
		return err
	}
	defer st.close()
	res, err := st.set(c.Context, req)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, res)
	}
	_, err = fmt.Fprintf(c.App.Writer, "set %s in %s: version %d\n", keyShown(key), ns, res.Version)
	return err
}

// readValue reads the value of -f FILE (- for standard input), at most
// one byte over the largest value a store takes (which refuses it,
// saying so).
func readValue(c *cli.Context, file string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, cli.Exit(fmt.Sprintf("-f: %v", err), base.ExitUsage)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, state.DefaultMaxValueBytes+1))
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("-f %s: %v", file, err), base.ExitFailed)
	}
	return b, nil
}

func stateDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a key (one commit)",
		ArgsUsage: "NAMESPACE KEY",
		Description: "A key that is not there is no error (it says so), unless --if-version names a version:\n" +
			"then, as for a key of another version, nothing is deleted and the exit status is 1.",
		Flags: stateFlagsOf(true, true, false, base64KeyFlag(),
			&cli.Uint64Flag{Name: "if-version", Usage: "delete it only if the key's version is `V`", DefaultText: "any"}),
		Action: func(c *cli.Context) error {
			st, ns, key, err := openForKey(c, "cmdhost state delete NAMESPACE KEY")
			if err != nil {
				return err
			}
			defer st.close()
			res, err := st.del(c.Context, ns, key, c.Uint64("if-version"))
			switch {
			case err != nil:
				return err
			case c.Bool("json"):
				return base.WriteJSONLine(c.App.Writer, res)
			case res.Existed:
				_, err = fmt.Fprintf(c.App.Writer, "deleted %s from %s\n", keyShown(key), ns)
			default:
				_, err = fmt.Fprintf(c.App.Writer, "no key %s in %s: nothing to delete\n", keyShown(key), ns)
			}
			return err
		},
	}
}

// keyShown shows a key in a message: quoted text, or base64:… when it
// is not text.
func keyShown(k []byte) string {
	sk := admin.KeyOf(k)
	if sk.KeyBase64 != nil {
		return "base64:" + base64.StdEncoding.EncodeToString(k)
	}
	return base.Shown(strconv.Quote(sk.Key))
}
