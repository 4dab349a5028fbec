package hostconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// The admin commands act on a fleet when --executor names several hosts:
// a comma-separated list of executor ids and glob patterns (path.Match:
// * ? [...]), the patterns matched against the hosts that announce
// themselves on the broker (admin.Client.Hosts). A share group's
// replicas are each a host of their own. Each host's outcome is printed on
// a line of its own.

// FleetSyntax reports whether --executor names hosts by a list or a
// pattern rather than by one executor id.
func FleetSyntax(executor string) bool { return strings.ContainsAny(executor, ",*?[") }

// maxHosts bounds the hosts a discovery keeps: anyone on the broker may
// announce one.
const maxHosts = 1024

// Target is one host an admin command acts on.
type Target struct {
	Executor string
	ID       admin.ReplicaID // its client id and share group, when known
	Client   *admin.Client   // asks it: its replica's topics for a replica
	Err      error           // why it cannot be asked (its outcome)
}

// Label names the target as the outcome lines do.
func (t Target) Label() string { return HostLine(t.Executor, t.ID) }

// discover returns the hosts that announce themselves on the broker: it
// listens until the first announcement (at most wait) and then for
// admin.DiscoveryWindow, which hears every live host.
func (h *AdminHost) discover(ctx context.Context, wait time.Duration) ([]admin.HostID, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	seen := map[admin.HostID]bool{}
	first := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		errc <- h.Client.Hosts(ctx, func(id admin.HostID) {
			once.Do(func() { close(first) })
			mu.Lock()
			defer mu.Unlock()
			if len(seen) < maxHosts {
				seen[id] = true
			}
		})
	}()
	select {
	case <-first:
	case <-time.After(wait):
		return nil, nil
	case err := <-errc:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-time.After(admin.DiscoveryWindow):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]admin.HostID, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b admin.HostID) int {
		return strings.Compare(a.Executor+"\x00"+a.ClientID, b.Executor+"\x00"+b.ClientID)
	})
	return out, nil
}

// hostClient returns the client that asks host id: its replica's own
// topics for a replica of a share group, its executor's for a lone host.
func (h *AdminHost) hostClient(id admin.HostID) (*admin.Client, error) {
	c, err := h.Client.ForExecutor(id.Executor)
	if err != nil || id.Share == "" || topic.CheckLevel(id.ClientID) != nil {
		return c, err
	}
	return c.ForReplica(id.ClientID)
}

// FleetTargets resolves spec, --executor's list of executor ids and
// patterns, into the hosts to act on: a pattern's matches among the
// hosts discovered; an executor id's host, or each replica of its share
// group. A host that does not answer is a target with its error. No
// host at all is an error (exit 4).
func (h *AdminHost) FleetTargets(ctx context.Context, spec string, timeout time.Duration) ([]Target, error) {
	var ids, patterns []string
	for _, item := range strings.Split(spec, ",") {
		switch item = strings.TrimSpace(item); {
		case item == "":
		case strings.ContainsAny(item, "*?["):
			if _, err := path.Match(item, ""); err != nil {
				return nil, cli.Exit(fmt.Sprintf("--executor %q: pattern %q: %v", spec, item, err), base.ExitUsage)
			}
			patterns = append(patterns, item)
		default:
			if err := topic.CheckLevel(item); err != nil {
				return nil, cli.Exit(fmt.Sprintf("--executor %q: %q is not an executor id: %v", spec, item, err), base.ExitUsage)
			}
			ids = append(ids, item)
		}
	}
	if len(ids)+len(patterns) == 0 {
		return nil, cli.Exit("--executor names no host: give executor ids or patterns, separated by commas (e.g. --executor 'edge-*,core-1')", base.ExitUsage)
	}
	var found []admin.HostID
	discovered := false
	discover := func() error {
		if discovered {
			return nil
		}
		discovered = true
		var err error
		found, err = h.discover(ctx, timeout)
		return err
	}
	var out []Target
	taken := map[string]bool{}
	add := func(id admin.HostID) {
		if key := id.Executor + "\x00" + id.ClientID; !taken[key] {
			taken[key] = true
			c, err := h.hostClient(id)
			out = append(out, Target{Executor: id.Executor, ID: id.ReplicaID, Client: c, Err: err})
		}
	}
	if len(patterns) > 0 {
		if err := discover(); err != nil {
			return nil, err
		}
		for _, id := range found {
			for _, p := range patterns {
				if ok, _ := path.Match(p, id.Executor); ok {
					add(id)
					break
				}
			}
		}
	}
	for _, e := range ids {
		c, err := h.Client.ForExecutor(e)
		if err != nil {
			return nil, err
		}
		out1, err := h.CallOn(ctx, c, admin.OpStats, nil, timeout)
		var st admin.Stats
		if err == nil {
			err = json.Unmarshal(out1, &st)
		}
		if err != nil {
			out = append(out, Target{Executor: e, Err: err})
			continue
		}
		if st.Share == "" {
			add(admin.HostID{Executor: e, ReplicaID: st.ReplicaID})
			continue
		}
		if err := discover(); err != nil {
			return nil, err
		}
		add(admin.HostID{Executor: e, ReplicaID: st.ReplicaID})
		for _, id := range found {
			if id.Executor == e && id.Share == st.Share {
				add(id)
			}
		}
	}
	if len(out) == 0 {
		return nil, cli.Exit(fmt.Sprintf("no host on %s matches --executor %q (cmdhost hosts lists those that answer)", h.brokerShown(), spec), base.ExitNoExecutor)
	}
	slices.SortStableFunc(out, func(a, b Target) int { return strings.Compare(a.Label(), b.Label()) })
	return out, nil
}

func (h *AdminHost) brokerShown() string { return redact.URL(h.Broker) }

// outcome is what an admin command did on one host, as --json prints it.
type outcome struct {
	Executor string `json:"executor"`
	admin.ReplicaID
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	line   string
	err    error
}

// OnHosts runs op on each host --executor names (one after the other, so
// that a failure stops nothing and the lines come in order), prints each
// host's outcome, and fails (exit 1; with one host, its own error) when
// any failed. op returns the line to print and the result for --json.
func OnHosts(c *cli.Context, token string, op func(ctx context.Context, h *AdminHost, t Target) (line string, result any, err error)) error {
	h, err := DialAdmin(c, token)
	if err != nil {
		return err
	}
	defer h.Close()
	spec := c.String("executor")
	if spec == "" {
		spec = h.Executor // the default host
	}
	targets, err := h.FleetTargets(c.Context, spec, HostTimeout(c))
	if err != nil {
		return err
	}
	outs := make([]outcome, len(targets))
	EachTarget(len(targets), opsAtOnce, func(i int) {
		t, o := targets[i], &outs[i]
		*o = outcome{Executor: t.Executor, ReplicaID: t.ID}
		var result any
		if o.err = t.Err; o.err == nil {
			o.line, result, o.err = op(c.Context, h, t)
		}
		if result != nil {
			o.Result, _ = json.Marshal(result)
		}
	})
	failed := 0
	for i, t := range targets {
		o := &outs[i]
		if o.err != nil {
			failed++
			o.Error = o.err.Error()
		} else {
			o.OK = true
		}
		if !c.Bool("json") {
			// What a host answers (and anyone may announce a host) is shown
			// with its control characters replaced.
			if o.err != nil {
				fmt.Fprintf(c.App.Writer, "%s: %s\n", t.Label(), base.Shown(o.err.Error()))
			} else {
				fmt.Fprintf(c.App.Writer, "%s: %s\n", t.Label(), base.Shown(o.line))
			}
		}
	}
	if c.Bool("json") {
		if err := base.WriteJSONLine(c.App.Writer, outs); err != nil {
			return err
		}
	}
	switch {
	case failed == 0:
		return nil
	case len(outs) == 1:
		var exit cli.ExitCoder
		if errors.As(outs[0].err, &exit) {
			return cli.Exit("", exit.ExitCode())
		}
		return cli.Exit("", base.ExitFailed)
	}
	return cli.Exit(fmt.Sprintf("%d of %d hosts failed", failed, len(outs)), base.ExitFailed)
}

// How many hosts are asked at once: an install sends a module to each,
// a stats is small. A host that does not answer costs its ack window
// (1.5 s), and anyone on the broker may announce hosts that do not.
const (
	opsAtOnce   = 4
	StatsAtOnce = 16
)

// EachTarget runs f(0)…f(n-1), at most limit at once, and returns when
// all have returned. Each f writes only its own index's results.
func EachTarget(n, limit int, f func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// HostTimeout is the op timeout of c: --timeout, or install's --wait.
func HostTimeout(c *cli.Context) time.Duration {
	for _, name := range []string{"timeout", "wait"} {
		if d := c.Duration(name); d > 0 {
			return d
		}
	}
	return admin.DefaultTimeout
}
