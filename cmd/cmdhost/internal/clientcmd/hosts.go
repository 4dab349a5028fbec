package clientcmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/buildinfo"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func HostsCommand() *cli.Command {
	return &cli.Command{
		Name:  "hosts",
		Usage: "list the hosts answering on a broker: id, replica, version, uptime, plugins and their digests",
		Description: "Every host announces itself each second on cmdhost/{executorId}/replicas; hosts\n" +
			"listens for the announcements (" + admin.DiscoveryWindow.String() + " from the first), asks each host for its\n" +
			"stats, and prints a line per host: each replica of a share group (serve --share)\n" +
			"on a line of its own. --executor keeps the hosts it names: executor ids and\n" +
			"glob patterns separated by commas (default: all). Exit status 4 when no host\n" +
			"answers.",
		Flags: append(hostconn.TargetFlags("MQTT broker `URL`", "the hosts to list: executor ids and glob `PATTERN`s, separated by commas (default: every host)"),
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the first host, and for each host's answer"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}),
		Action: runHosts,
	}
}

// HostRow is one host as `cmdhost hosts` shows it.
type HostRow struct {
	Executor string `json:"executor"`
	admin.ReplicaID
	Version string            `json:"version,omitempty"`
	Started time.Time         `json:"started,omitzero"`
	Plugins []pluginVersion   `json:"plugins"`
	Error   string            `json:"error,omitempty"`
	build   buildinfo.Version // the table's VERSION: Short
}

// pluginVersion is a plugin of a host: its state and, when it serves,
// the digest of the version serving.
type pluginVersion struct {
	Name   string          `json:"name"`
	State  pluginmgr.State `json:"state"`
	Digest string          `json:"digest,omitempty"`
}

func (p pluginVersion) String() string {
	if p.State == pluginmgr.StateServing {
		return base.Shown(p.Name) + "@" + base.Short(p.Digest)
	}
	return base.Shown(p.Name) + "(" + base.Shown(string(p.State)) + ")"
}

// hostVersion is a host's version as the table shows it: a release's
// tag, or dev with its commit and date (buildinfo.Version.Short); ""
// from a host that does not say.
func hostVersion(v HostRow) string {
	if v.Version == "" {
		return ""
	}
	return v.build.Short()
}

func runHosts(c *cli.Context) error {
	if c.NArg() != 0 {
		return cli.Exit("hosts takes no arguments: cmdhost hosts [--broker URL] [--executor PATTERN]", base.ExitUsage)
	}
	spec := c.String("executor")
	if spec == "" {
		spec = "*"
	}
	if err := c.Set("executor", "cmdhost-hosts"); err != nil { // the admin client's own, unused
		return err
	}
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	timeout := c.Duration("timeout")
	targets, err := h.FleetTargets(c.Context, spec, timeout)
	if err != nil {
		return err
	}
	views := make([]HostRow, len(targets))
	hostconn.EachTarget(len(targets), hostconn.StatsAtOnce, func(i int) {
		t, v := targets[i], &views[i]
		*v = HostRow{Executor: t.Executor, ReplicaID: t.ID, Plugins: []pluginVersion{}}
		var st admin.Stats
		err := t.Err
		if err == nil {
			var out []byte
			if out, err = h.CallOn(c.Context, t.Client, admin.OpStats, nil, timeout); err == nil {
				err = json.Unmarshal(out, &st)
			}
		}
		if err != nil {
			v.Error = err.Error()
			return
		}
		v.ReplicaID, v.Version, v.Started, v.build = st.ReplicaID, st.Build.Version, st.Started, st.Build
		for _, p := range st.Plugins {
			v.Plugins = append(v.Plugins, pluginVersion{Name: p.Name, State: p.State, Digest: p.Digest})
		}
	})
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, views)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXECUTOR\tREPLICA\tSHARE GROUP\tVERSION\tUPTIME\tPLUGINS")
	for _, v := range views {
		if v.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t%s\n", base.Shown(v.Executor), base.OrDash(base.Shown(v.ClientID)), base.OrDash(base.Shown(v.Share)), base.Clip(base.Shown(v.Error), 120))
			continue
		}
		uptime := "-"
		if !v.Started.IsZero() {
			uptime = time.Since(v.Started).Round(time.Second).String()
		}
		var plugins []string
		for _, p := range v.Plugins {
			plugins = append(plugins, p.String())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", base.Shown(v.Executor), base.OrDash(base.Shown(v.ClientID)), base.OrDash(base.Shown(v.Share)),
			base.OrDash(base.Shown(hostVersion(v))), uptime, base.OrDash(strings.Join(plugins, " ")))
	}
	return tw.Flush()
}
