package clientcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
)

// watchAllFrame is one refresh of `cmdhost watch --all`: a frame per
// replica of the host's share group (each with its reloads), and the
// timeouts the group published since the refresh before.
type watchAllFrame struct {
	Time       time.Time    `json:"time"`
	Executor   string       `json:"executor"`
	Replicas   []WatchFrame `json:"replicas"`
	Happenings []Happening  `json:"happenings"`
}

// watchAll is watch --all: each refresh asks every replica heard from
// (admin.ReplicasTopic) for its stats on its own topics; the first waits
// for admin.DiscoveryWindow. events holds the group's timeout events.
func watchAll(ctx context.Context, c *cli.Context, h *hostconn.AdminHost, events *watcher, sawEvent <-chan struct{}, lines bool) error {
	interval, timeout := c.Duration("interval"), c.Duration("timeout")
	set := h.ListenReplicas(ctx)
	group, ids, err := h.Replicas(ctx, set, timeout)
	switch {
	case ctx.Err() != nil:
		return interrupted()
	case err != nil:
		return err
	}
	watchers := map[string]*watcher{}
	var recent []Happening
	return refreshes(ctx, c, interval, func(n int) error {
		if n > 1 && group.Share != "" {
			ids = set.Live(time.Now(), group.Share)
		}
		f := watchAllFrame{Time: time.Now(), Executor: h.Executor, Replicas: []WatchFrame{}}
		for _, id := range ids {
			client, err := h.ReplicaClient(id)
			if err != nil {
				return err
			}
			out, err := h.CallOn(ctx, client, admin.OpStats, nil, timeout)
			if ctx.Err() != nil {
				return interrupted()
			}
			var st admin.Stats
			if err == nil {
				err = json.Unmarshal(out, &st)
			}
			if err != nil {
				// A replica that went away since it announced itself
				// drops out at its next missed announcements.
				fmt.Fprintf(c.App.ErrWriter, "watch: replica %s: %v\n", base.Clip(base.Shown(id), 64), err)
				continue
			}
			w := watchers[id]
			if w == nil {
				w = &watcher{executor: h.Executor}
				watchers[id] = w
			}
			f.Replicas = append(f.Replicas, w.frame(st, f.Time))
		}
		f.Happenings = events.drain()
		if f.Happenings == nil {
			f.Happenings = []Happening{}
		}
		if lines {
			return base.WriteJSONLine(c.App.Writer, f)
		}
		for _, r := range f.Replicas {
			recent = keepRecent(recent, r.Happenings)
		}
		recent = keepRecent(recent, f.Happenings)
		printAllFrame(c.App.Writer, viewWidth(c.App.Writer), f, redact.URL(h.Broker), interval, recent, closed(sawEvent))
		return nil
	})
}

// printAllFrame draws watch --all on a terminal: a block per replica (its
// name, then its plugins), then the last errors, each replica's reuse
// cache and the recent happenings of all.
func printAllFrame(w io.Writer, width int, f watchAllFrame, broker string, interval time.Duration, recent []Happening, sawEvent bool) {
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	header(w, width, append(hostParts(fmt.Sprintf("cmdhost watch: host %s, %d replicas,", base.Shown(f.Executor), len(f.Replicas)), "on "+broker, width),
		f.Time.Format("15:04:05"), fmt.Sprintf("every %v (Ctrl-C quits)", interval))...)
	var failing []watchPlugin
	var total WatchFrame
	for _, r := range f.Replicas {
		fmt.Fprintln(w)
		fmt.Fprintln(w, base.Clip(fmt.Sprintf("replica %s (reuse cache: %d hits, %d misses)", base.Shown(r.ClientID), r.ReuseHits, r.ReuseMisses), width))
		for _, p := range printPluginRows(w, r.Plugins) {
			p.Name = base.Clip(base.Shown(r.ClientID), 12) + ":" + p.Name
			failing = append(failing, p)
		}
		total.ReuseHits += r.ReuseHits
		total.ReuseMisses += r.ReuseMisses
	}
	printTail(w, width, total, failing, recent, sawEvent)
}
