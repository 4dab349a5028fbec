package plugincmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the plugins of a running host, or of a plugins folder offline",
		ArgsUsage: "[DIR]",
		Description: "Without DIR: asks a running host (--broker, --executor) for its plugins; with\n" +
			"replicas (serve --share), the replica that answers is named, and --all asks each.\n" +
			"With DIR: loads the plugins folder offline as serve would (operator files\n" +
			"NAME.json included) and shows each command's execution timeout with the\n" +
			"setting it comes from and its on_timeout policy; --exec-timeout is serve's.\n" +
			"Exit status 1 when a plugin would not be served.",
		Flags: append(hostconn.HostFlags(), execTimeoutFlag(), hostconn.AllFlag()),
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
			case 1:
				if c.Bool("all") {
					return cli.Exit("--all asks a running host's replicas: not with a plugins folder", base.ExitUsage)
				}
				return runListDir(c, c.Args().First())
			default:
				return cli.Exit("list takes at most one plugins folder: cmdhost plugin list [DIR]", 2)
			}
			if hostconn.FleetSyntax(c.String("executor")) {
				return runListFleet(c)
			}
			if c.Bool("all") {
				return runListAll(c)
			}
			if c.Bool("json") {
				out, err := hostconn.AdminCall(c, admin.OpList, nil)
				if err != nil {
					return err
				}
				if string(bytes.TrimSpace(out)) == "null" { // a host from before it said []
					out = []byte("[]")
				}
				_, err = c.App.Writer.Write(append(out, '\n'))
				return err
			}
			// The stats carry the plugins and name the replica even when
			// there is no plugin.
			h, err := hostconn.DialAdmin(c, "")
			if err != nil {
				return err
			}
			defer h.Close()
			st, err := h.Stats(c.Context, c.Duration("timeout"))
			if err != nil {
				return err
			}
			if err := PrintPluginTable(c.App.Writer, st.Plugins); err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, hostconn.HostLine(h.Executor, st.ReplicaID))
			return err
		},
	}
}

// PrintPluginTable writes plugin list's table of views.
func PrintPluginTable(w io.Writer, views []admin.PluginView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// ERRORS counts the calls that failed (trap, timeout, bad
	// reply) and those answered with an error status.
	// FUEL/CALL is the mean work units of its calls (docs/plugins.md, Fuel).
	// KEYS and BYTES are what the plugin's state namespace holds.
	fmt.Fprintln(tw, "NAME\tSTATE\tDIGEST\tCOMMANDS\tINSTANCES\tCALLS\tERRORS\tP50\tP99\tFUEL/CALL\tRELOADS\tKEYS\tBYTES\tLAST ERROR")
	for _, v := range views {
		p50, p99 := "-", "-" // no call of the version serving, no latency
		if v.P99Ms > 0 {
			p50, p99 = fmt.Sprintf("%.2fms", v.P50Ms), fmt.Sprintf("%.2fms", v.P99Ms)
		}
		fuel := "-"
		if v.Fuel.Calls > 0 {
			fuel = hostconn.Units(v.Fuel.PerCall())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", base.Shown(v.Name), base.Shown(string(v.State)), base.Short(v.Digest),
			base.Shown(commandList(v.Commands)), v.Instances, v.Calls, v.Failures+v.ErrorReplies, p50, p99, fuel, v.Reloads, v.StateKeys, v.StateBytes,
			base.OrDash(base.Shown(v.LastError)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printTriggerTable(w, views)
}

// printTriggerTable writes plugin list's table of the plugins' triggers,
// when they have any: each one's topic, whether it is subscribed and why
// not, and what the host did with its messages.
func printTriggerTable(w io.Writer, views []admin.PluginView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := false
	for _, v := range views {
		for _, t := range v.Triggers {
			if !header {
				fmt.Fprintln(tw, "\nTRIGGER\tPLUGIN\tTOPIC\tSTATE\tMESSAGES\tHANDLED\tFAILURES\tDROPPED\tDUPLICATES\tWHY NOT SUBSCRIBED")
				header = true
			}
			why := t.Why
			if t.SubscribeError != "" {
				why = t.SubscribeError
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", base.Shown(t.Name), base.Shown(v.Name), base.Shown(t.Topic), base.Shown(string(t.State)),
				t.Messages, t.Handled, t.Failures, t.Dropped, t.Duplicates, base.OrDash(base.Shown(why)))
		}
	}
	return tw.Flush()
}

// ReplicaPlugins is one replica's plugins, as plugin list --all --json
// prints them.
type ReplicaPlugins struct {
	admin.ReplicaID
	Plugins []admin.PluginView `json:"plugins"`
}

// runListAll lists the plugins of every replica of the host's share
// group (a lone host: its own), one table (or one JSON object) each.
func runListAll(c *cli.Context) error {
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	set := h.ListenReplicas(ctx)
	_, ids, err := h.Replicas(ctx, set, c.Duration("timeout"))
	if err != nil {
		return err
	}
	all := []ReplicaPlugins{}
	for _, id := range ids {
		client, err := h.ReplicaClient(id)
		if err != nil {
			return err
		}
		out, err := h.CallOn(ctx, client, admin.OpStats, nil, c.Duration("timeout"))
		if err != nil && ctx.Err() == nil && len(ids) > 1 {
			// A replica that announced itself may have stopped since (or
			// the announcement was not a replica's): the others are
			// shown, as watch --all does.
			fmt.Fprintf(c.App.ErrWriter, "plugin list: replica %s: %v\n", base.Clip(base.Shown(id), 64), err)
			continue
		}
		if err != nil {
			return err
		}
		var st admin.Stats
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Errorf("the stats of replica %s: %w", base.Shown(id), err)
		}
		all = append(all, ReplicaPlugins{ReplicaID: st.ReplicaID, Plugins: st.Plugins})
	}
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, all)
	}
	for i, r := range all {
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		fmt.Fprintln(c.App.Writer, hostconn.HostLine(h.Executor, r.ReplicaID)+":")
		if err := PrintPluginTable(c.App.Writer, r.Plugins); err != nil {
			return err
		}
	}
	return nil
}

// commandList shows up to three command names and how many more there are.
func commandList(cmds []string) string {
	if len(cmds) > 3 {
		return strings.Join(cmds[:3], ",") + fmt.Sprintf(",+%d", len(cmds)-3)
	}
	return base.OrDash(strings.Join(cmds, ","))
}

// fleetPlugins is one host's plugins, as plugin list --executor
// PATTERN --json prints them.
type fleetPlugins struct {
	Executor string `json:"executor"`
	ReplicaPlugins
	Error string `json:"error,omitempty"`
}

// runListFleet lists the plugins of each host --executor names (a list
// or a pattern): a table per host, or one JSON array.
func runListFleet(c *cli.Context) error {
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	targets, err := h.FleetTargets(c.Context, c.String("executor"), c.Duration("timeout"))
	if err != nil {
		return err
	}
	all := make([]fleetPlugins, len(targets))
	errs := make([]error, len(targets))
	hostconn.EachTarget(len(targets), hostconn.StatsAtOnce, func(i int) {
		t := targets[i]
		hp := fleetPlugins{Executor: t.Executor, ReplicaPlugins: ReplicaPlugins{ReplicaID: t.ID, Plugins: []admin.PluginView{}}}
		err := t.Err
		if err == nil {
			var out []byte
			if out, err = h.CallOn(c.Context, t.Client, admin.OpStats, nil, c.Duration("timeout")); err == nil {
				var st admin.Stats
				if err = json.Unmarshal(out, &st); err == nil {
					hp.ReplicaID, hp.Plugins = st.ReplicaID, st.Plugins
				}
			}
		}
		all[i], errs[i] = hp, err
	})
	failed := 0
	for i, t := range targets {
		hp, err := &all[i], errs[i]
		if err != nil {
			failed++
			hp.Error = err.Error()
		}
		if c.Bool("json") {
			continue
		}
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		if err != nil {
			fmt.Fprintf(c.App.Writer, "%s: %s\n", t.Label(), base.Shown(err.Error()))
			continue
		}
		fmt.Fprintln(c.App.Writer, hostconn.HostLine(t.Executor, hp.ReplicaID)+":")
		if err := PrintPluginTable(c.App.Writer, hp.Plugins); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		if err := base.WriteJSONLine(c.App.Writer, all); err != nil {
			return err
		}
	}
	if failed > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d hosts did not answer", failed, len(all)), base.ExitFailed)
	}
	return nil
}
