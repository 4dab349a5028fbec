package app

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md's flag tables from the commands' flags")

// flagTableBlock is a generated flag table of docs/cli.md: the command's
// path after "cmdhost", then the table.
var flagTableBlock = regexp.MustCompile(`(?s)<!-- flags: ([a-z ]+) -->\n.*?<!-- end flags -->`)

// TestDocsCLIFlagTables: docs/cli.md has a section per command, each with
// a flag table that is the command's flags as its --help has them (name,
// default, variable, usage; serve's by category). A flag added, renamed
// or reworded changes the table:
//
//	go test ./cmd/cmdhost/internal/app -run TestDocsCLIFlagTables -update-docs
//
// rewrites them, for a reviewer to see in the diff.
func TestDocsCLIFlagTables(t *testing.T) {
	file := filepath.Join(clitest.RepoRoot(t), "docs", "cli.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	app := New(nil, nil)
	seen := map[string]bool{}
	var stale []string
	out := flagTableBlock.ReplaceAllStringFunc(doc, func(block string) string {
		path := flagTableBlock.FindStringSubmatch(block)[1]
		seen[path] = true
		cmd := commandAt(app.Commands, strings.Fields(path))
		if cmd == nil {
			t.Errorf("docs/cli.md has a flag table of `cmdhost %s`, which is no command", path)
			return block
		}
		want := "<!-- flags: " + path + " -->\n" + flagTable(cmd) + "<!-- end flags -->"
		if want != block {
			stale = append(stale, path)
		}
		return want
	})
	for _, path := range leafCommands(app.Commands, nil) {
		if !seen[path] {
			t.Errorf("docs/cli.md has no section with the flags of `cmdhost %s`: add a heading, its synopsis, and <!-- flags: %s --><!-- end flags --> (then -update-docs)", path, path)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(stale) > 0 {
		t.Errorf("docs/cli.md's flag tables of %s differ from the commands' flags: go test ./cmd/cmdhost/internal/app -run TestDocsCLIFlagTables -update-docs", strings.Join(stale, ", "))
	}
}

// commandAt is the command at path among cmds, or nil.
func commandAt(cmds []*cli.Command, path []string) *cli.Command {
	var c *cli.Command
	for _, name := range path {
		if c = base.Find(cmds, name); c == nil {
			return nil
		}
		cmds = c.Subcommands
	}
	return c
}

// leafCommands are the paths of the commands that run (no subcommands),
// but help.
func leafCommands(cmds []*cli.Command, prefix []string) []string {
	var out []string
	for _, c := range cmds {
		if c.Name == "help" || c.Hidden {
			continue
		}
		path := append(append([]string{}, prefix...), c.Name)
		if len(c.Subcommands) == 0 {
			out = append(out, strings.Join(path, " "))
			continue
		}
		out = append(out, leafCommands(c.Subcommands, path)...)
	}
	return out
}

// flagTable is the markdown table of cmd's flags, one per category (in
// the order flagHelp shows them) under the category's name.
func flagTable(cmd *cli.Command) string {
	var b strings.Builder
	var cat string
	first := true
	for _, f := range cmd.VisibleFlags() {
		if f.Names()[0] == "help" {
			continue
		}
		if c := base.CategoryOf(f); first || c != cat {
			if c != "" {
				fmt.Fprintf(&b, "\n**%s**\n\n", c)
			} else if !first {
				b.WriteString("\n")
			}
			b.WriteString("| flag | default | variable | |\n|---|---|---|---|\n")
			cat, first = c, false
		}
		df := f.(cli.DocGenerationFlag)
		_, usage := base.UnquoteUsage(df.GetUsage())
		def := ""
		if _, isBool := f.(*cli.BoolFlag); !isBool {
			def = strings.Trim(df.GetDefaultText(), `"`)
		}
		var env []string
		for _, e := range df.GetEnvVars() {
			env = append(env, "`"+e+"`")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", strings.TrimSuffix(base.FlagNames(f), "…"), cell(def), strings.Join(env, ", "), cell(usage))
	}
	if first {
		return "(no flags)\n"
	}
	return b.String()
}

// cell is s in a table cell: its pipes escaped.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
