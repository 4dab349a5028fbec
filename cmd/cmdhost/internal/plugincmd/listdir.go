package plugincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// folderPlugin is what `plugin list DIR` reports about one plugin: the
// state serve would give it and how it would serve its commands.
type folderPlugin struct {
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Operator string        `json:"operator,omitempty"` // the operator file applied, or that disabled the plugin
	State    string        `json:"state"`              // serving, failed or disabled, as serve's
	Error    string        `json:"error,omitempty"`    // why it would not be served
	Commands []commandView `json:"commands"`           // sorted by name
}

// runListDir lists a plugins folder offline: it loads it with a plugins
// manager, as serve does (operator files, refusals, clashes), and shows
// each command's effective timeout with its source and on_timeout policy.
func runListDir(c *cli.Context, dir string) error {
	hostTimeout, err := execTimeout(c)
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return cli.Exit(fmt.Sprintf("%s: not a directory", dir), 2)
	}
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	m, closeFolder := FolderManager(e, dir, pluginmgr.Defaults{ExecTimeout: setting.ZeroIsOff(hostTimeout)})
	defer closeFolder()
	m.LoadAll(c.Context) // the problems show in Status

	byPlugin := map[string][]commandView{}
	for _, s := range m.Commands() {
		byPlugin[s.Plugin] = append(byPlugin[s.Plugin], newCommandView(s))
	}
	out := []folderPlugin{}
	failed := 0
	for _, st := range m.Status() {
		p := folderPlugin{Name: st.Name, File: st.File, Operator: st.Operator, State: string(st.State),
			Error: st.LastError, Commands: byPlugin[st.Name]}
		if p.Commands == nil {
			p.Commands = []commandView{}
		}
		if st.State == pluginmgr.StateFailed {
			failed++
		}
		out = append(out, p)
	}

	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else if err := printFolder(c.App.Writer, dir, out); err != nil {
		return err
	}
	if failed > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d plugins would not be served", failed, len(out)), 1)
	}
	return nil
}

// FolderManager is a plugins manager for the plugins folder dir offline,
// as serve's (operator files, refusals, clashes: after LoadAll the
// problems show in its Status), with the function that closes it. plugin
// list DIR shows what it loads; plugin install and dev check a module
// against it (Manager.Check), so that the three apply the host's one
// rule. A LoadAll after the first loads only the files changed since.
func FolderManager(e *wasm.Engine, dir string, defaults pluginmgr.Defaults) (*pluginmgr.Manager, func()) {
	m := pluginmgr.NewManager(pluginmgr.Config{Dir: dir, Engine: e, Plugin: wasm.PluginConfig{PoolSize: 1, IdleTimeout: wasm.NoTimeout},
		Defaults: defaults})
	return m, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}
}

// printFolder prints what the folder dir holds, read offline (no host
// is asked: its words are what a host would do, never "serving"): one row
// per command (plugin repeated, for grep), one per plugin that serves
// none, then the errors.
func printFolder(w io.Writer, dir string, plugins []folderPlugin) error {
	served := 0
	for _, p := range plugins {
		if p.State == string(pluginmgr.StateServing) {
			served++
		}
	}
	noun := "plugins"
	if len(plugins) == 1 {
		noun = "plugin"
	}
	fmt.Fprintf(w, "plugins folder %s, read offline (no host asked): %d %s, %d a host would serve\n\n", dir, len(plugins), noun, served)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tIN A HOST\tCOMMAND\tIDEMPOTENT\tTIMEOUT\tON TIMEOUT")
	for _, p := range plugins {
		if len(p.Commands) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\n", p.Name, folderState(p.State))
		}
		for _, cmd := range p.Commands {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\n", p.Name, folderState(p.State), cmd.Name, cmd.Idempotent, timeoutWithSource(cmd.TimeoutView), timeoutPolicy(cmd.TimeoutView))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sep := "\n"
	for _, p := range plugins {
		if p.Error != "" {
			fmt.Fprintf(w, "%s%s: %s\n", sep, p.Name, p.Error)
			sep = ""
		}
	}
	return nil
}

// folderState says what a host would do with a plugin of the folder,
// given the state the offline load gave it: "served", "refused" (it
// failed: its error follows the table), or the state itself (disabled).
func folderState(state string) string {
	switch pluginmgr.State(state) {
	case pluginmgr.StateServing:
		return "served"
	case pluginmgr.StateFailed:
		return "refused"
	}
	return state
}
