package plugincmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host/admin"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func rolloutCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollout",
		Usage:     "install a module on hosts batch by batch, watch each batch's error rate and p99, and roll a bad batch back",
		ArgsUsage: "FILE.wasm|oci://REGISTRY/REPO[:TAG|@sha256:…]",
		Description: "The hosts --executor names (ids and glob patterns, comma-separated; each\n" +
			"replica of a share group) are taken --batch at a time, in name order. Each\n" +
			"batch gets the module as plugin install --executor sends it; then, for --watch,\n" +
			"the new version's calls and errors (failed calls and error replies) are read\n" +
			"from the hosts' stats. A batch whose errors exceed --max-error-rate of its calls,\n" +
			"or whose p99 exceeds --max-p99, or where a host refused the module, is rolled\n" +
			"back (each host serves its previous version again; a plugin new there is\n" +
			"removed) and the rollout stops, exit 1. A window without calls passes. The\n" +
			"outcome of every host is printed as a table (--json: an array).",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "plugin name (default: the file's base name, or the repository's last element)"},
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "hosts installed at once"},
			&cli.DurationFlag{Name: "watch", Value: 30 * time.Second, Usage: "how long each batch is watched before the next"},
			&cli.Float64Flag{Name: "max-error-rate", Value: 0.01, Usage: "largest share of a batch's calls that may fail (0.01: 1 %)"},
			&cli.DurationFlag{Name: "max-p99", Usage: "largest p99 latency of the new version on a host (0: not checked)"},
			&cli.BoolFlag{Name: "json", Usage: "print the outcome of every host as JSON"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for each host's answer"},
		}, hostconn.TargetFlags("MQTT broker `URL`", "the hosts: executor ids and glob `PATTERN`s, separated by commas")...), hostconn.TokenFlags()...), registry.RegistryFlags()...),
		Action: runRollout,
	}
}

// rolloutRow is one host's outcome of a rollout.
type rolloutRow struct {
	Executor string `json:"executor"`
	admin.ReplicaID
	Batch      int     `json:"batch"`
	Outcome    string  `json:"outcome"` // served, rolled back, refused, failed, not reached
	Calls      int64   `json:"calls"`
	Errors     int64   `json:"errors"`
	ErrorRate  float64 `json:"errorRate"`
	P99Ms      float64 `json:"p99Ms"`
	Digest     string  `json:"digest,omitempty"`
	Detail     string  `json:"detail,omitempty"`
	before     string  // the digest the host served before the install; "": none
	label      string
	baseCalls  int64
	baseErrors int64
}

// Rollout outcomes.
const (
	outcomeServed     = "served"
	outcomeRolledBack = "rolled back"
	outcomeRefused    = "refused"
	outcomeFailed     = "failed"
	outcomeNotReached = "not reached"
)

func runRollout(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("rollout needs one module file or oci:// reference: cmdhost plugin rollout FILE.wasm --executor PATTERN", base.ExitUsage)
	}
	if c.Int("batch") < 1 || c.Duration("watch") < 0 || c.Float64("max-error-rate") < 0 {
		return cli.Exit("--batch must be at least 1, --watch and --max-error-rate not negative", base.ExitUsage)
	}
	src, done, err := registry.PulledFile(c, c.Args().First())
	if err != nil {
		return err
	}
	defer done()
	name, bin, sig, token, err := moduleToSend(c, src)
	if err != nil {
		return err
	}
	h, err := hostconn.DialAdmin(c, token)
	if err != nil {
		return err
	}
	defer h.Close()
	spec := c.String("executor")
	if spec == "" {
		spec = h.Executor
	}
	timeout := c.Duration("timeout")
	targets, err := h.FleetTargets(c.Context, spec, timeout)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(bin)
	fmt.Fprintf(c.App.ErrWriter, "rolling out %s as plugin %s (sha256 %s) to %d hosts, %d at a time, watching each batch for %v\n",
		src, name, hex.EncodeToString(sum[:])[:12], len(targets), c.Int("batch"), c.Duration("watch"))
	rows := make([]rolloutRow, len(targets))
	for i, t := range targets {
		rows[i] = rolloutRow{Executor: t.Executor, ReplicaID: t.ID, Batch: i/c.Int("batch") + 1, Outcome: outcomeNotReached, label: t.Label()}
	}
	failed := ""
	for start := 0; start < len(targets) && failed == ""; start += c.Int("batch") {
		end := min(start+c.Int("batch"), len(targets))
		batch := rows[start:end]
		failed = rolloutBatch(c, h, targets[start:end], batch, name, bin, sig)
		if failed != "" {
			for i := range batch {
				rollBack(c.Context, h, targets[start+i], &batch[i], name, timeout)
			}
		}
	}
	if err := printRollout(c, rows); err != nil {
		return err
	}
	if failed != "" {
		return cli.Exit("rollout stopped: "+base.Shown(failed), base.ExitFailed) // a host's words
	}
	return nil
}

// rolloutBatch installs the module on a batch of hosts and watches it:
// "" when the batch passed, else why it did not.
func rolloutBatch(c *cli.Context, h *hostconn.AdminHost, targets []hostconn.Target, rows []rolloutRow, name string, bin, sig []byte) string {
	timeout := c.Duration("timeout")
	why := ""
	for i, t := range targets {
		r := &rows[i]
		if t.Err != nil {
			r.Outcome, r.Detail = outcomeFailed, t.Err.Error()
			why = r.label + ": " + t.Err.Error()
			continue
		}
		if view, err := hostPluginView(c.Context, h, t, name, timeout); err == nil && view.State == pluginmgr.StateServing {
			r.before = view.Digest
		}
		v, err := t.Client.WithTimeout(timeout).Install(c.Context, name, bin, sig)
		switch {
		case err != nil:
			r.Outcome, r.Detail = outcomeFailed, h.Explain(t.Client, admin.OpInstall, timeout, err).Error()
			why = r.label + ": " + r.Detail
		case !v.Served:
			r.Outcome, r.Detail = outcomeRefused, v.Reason
			why = r.label + " refused it: " + v.Reason
		default:
			r.Outcome, r.Digest = outcomeServed, v.Digest
			if view, err := hostPluginView(c.Context, h, t, name, timeout); err == nil {
				r.baseCalls, r.baseErrors = view.Calls, view.Failures+view.ErrorReplies
			}
		}
	}
	if why != "" {
		return why
	}
	select {
	case <-c.Context.Done():
		return "interrupted"
	case <-time.After(c.Duration("watch")):
	}
	var calls, errs int64
	for i, t := range targets {
		r := &rows[i]
		view, err := hostPluginView(c.Context, h, t, name, timeout)
		if err != nil {
			r.Detail = err.Error()
			why = r.label + ": " + err.Error()
			continue
		}
		r.Calls, r.Errors, r.P99Ms = view.Calls-r.baseCalls, view.Failures+view.ErrorReplies-r.baseErrors, view.P99Ms
		if r.Calls > 0 {
			r.ErrorRate = float64(r.Errors) / float64(r.Calls)
		}
		calls, errs = calls+r.Calls, errs+r.Errors
		if limit := c.Duration("max-p99"); limit > 0 && time.Duration(view.P99Ms*float64(time.Millisecond)) > limit {
			why = fmt.Sprintf("%s: p99 %.2fms over --max-p99 %v", r.label, view.P99Ms, limit)
		}
	}
	if calls > 0 && float64(errs)/float64(calls) > c.Float64("max-error-rate") {
		why = fmt.Sprintf("batch %d: %d errors in %d calls (%.1f %%), over --max-error-rate %g", rows[0].Batch, errs, calls, 100*float64(errs)/float64(calls), c.Float64("max-error-rate"))
	}
	return why
}

// hostPluginView is host t's view of plugin name.
func hostPluginView(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target, name string, timeout time.Duration) (admin.PluginView, error) {
	out, err := h.CallOn(ctx, t.Client, admin.OpList, nil, timeout)
	if err != nil {
		return admin.PluginView{}, err
	}
	var views []admin.PluginView
	if err := json.Unmarshal(out, &views); err != nil {
		return admin.PluginView{}, err
	}
	for _, v := range views {
		if v.Name == name {
			return v, nil
		}
	}
	return admin.PluginView{}, fmt.Errorf("it lists no plugin %s", name)
}

// rollBack undoes the install on host t: it serves the version it served
// before again, or removes a plugin that was new there; a host that
// already served this version is left as it was. The rejected version is
// not kept for a rollback (admin.Client.Reject): a later `plugin
// rollback` of the fleet serves one version on every host.
func rollBack(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target, r *rolloutRow, name string, timeout time.Duration) {
	if r.Outcome != outcomeServed || r.before == r.Digest {
		return
	}
	var err error
	if r.before == "" {
		_, err = h.CallOn(ctx, t.Client, admin.OpRemove, admin.Request{Name: name}, timeout)
	} else {
		var v admin.Verdict
		v, err = t.Client.WithTimeout(timeout).Reject(ctx, name)
		switch {
		case err != nil:
		case !v.Served:
			err = fmt.Errorf("rollback refused: %s", v.Reason)
		case v.Digest != r.before:
			err = fmt.Errorf("the version kept, %s, is not the one served before, %s", base.Short(v.Digest), base.Short(r.before))
		case v.Previous == r.Digest:
			// A host older than admin.Request.Reject.
			r.Detail = "the host keeps the rejected version for a rollback: `plugin rollback` there would serve it again"
		}
	}
	if err != nil {
		r.Outcome, r.Detail = outcomeFailed, "rolling back: "+err.Error()
		return
	}
	r.Outcome = outcomeRolledBack
}

func printRollout(c *cli.Context, rows []rolloutRow) error {
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, rows)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tBATCH\tOUTCOME\tCALLS\tERRORS\tERROR RATE\tP99\tDETAIL")
	for _, r := range rows {
		rate, p99 := "-", "-"
		if r.Calls > 0 {
			rate = fmt.Sprintf("%.1f%%", 100*r.ErrorRate)
		}
		if r.P99Ms > 0 {
			p99 = fmt.Sprintf("%.2fms", r.P99Ms)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", strings.TrimPrefix(r.label, "host "), r.Batch, r.Outcome, r.Calls, r.Errors, rate, p99, base.OrDash(base.Clip(base.Shown(r.Detail), 100)))
	}
	return tw.Flush()
}
