package clientcmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/redact"
)

func WatchCommand() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "a live view of a running host: its plugins, calls/s, errors, latency, in flight, recent timeouts and reloads",
		Description: "Asks the host for its stats (the admin op stats) every --interval and receives its\n" +
			"timeout events (published with serve --events). On a terminal the view is redrawn\n" +
			"in place; otherwise each refresh is one JSON line (--json forces it): the plugins\n" +
			"with their rates since the line before, and the timeouts and reloads since.\n" +
			"With replicas (serve --share), the replica that answers is named; --all shows\n" +
			"each replica of the group, found by their announcements.",
		Flags: append(hostconn.HostFlags(),
			&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "time between refreshes"},
			&cli.IntFlag{Name: "count", Usage: "stop after this many refreshes (0: until Ctrl-C)"},
			hostconn.AllFlag(),
		),
		Action: runWatch,
	}
}

func runWatch(c *cli.Context) error {
	if hostconn.FleetSyntax(c.String("executor")) {
		return cli.Exit("watch shows one host (with --all, each replica of its share group): --executor takes one id; cmdhost hosts --executor '"+c.String("executor")+"' lists many", base.ExitUsage)
	}
	if c.NArg() != 0 {
		return cli.Exit("watch takes no arguments: cmdhost watch [--executor ID] [--broker URL]", base.ExitUsage)
	}
	interval := c.Duration("interval")
	if interval < 100*time.Millisecond {
		return cli.Exit("--interval must be at least 100ms, e.g. --interval 2s", base.ExitUsage)
	}
	if c.Int("count") < 0 {
		return cli.Exit("--count must not be negative", base.ExitUsage)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	w := &watcher{executor: h.Executor}
	sawEvent := make(chan struct{})
	go func() {
		// Events come only from a host with --events; none is no error.
		_ = h.Client.Events(ctx, func(p []byte) {
			w.noteEvent(p)
			select {
			case <-sawEvent:
			default:
				close(sawEvent)
			}
		})
	}()
	lines := c.Bool("json") || !base.IsTerminal(c.App.Writer)
	if c.Bool("all") {
		return watchAll(ctx, c, h, w, sawEvent, lines)
	}
	var recent []Happening
	return refreshes(ctx, c, interval, func(int) error {
		st, err := h.Stats(ctx, c.Duration("timeout"))
		switch {
		case ctx.Err() != nil:
			return interrupted()
		case err != nil:
			return err
		}
		f := w.frame(st, time.Now())
		if lines {
			return base.WriteJSONLine(c.App.Writer, f)
		}
		recent = keepRecent(recent, f.Happenings)
		printFrame(c.App.Writer, viewWidth(c.App.Writer), f, redact.URL(h.Broker), interval, recent, closed(sawEvent))
		return nil
	})
}

// refreshes calls refresh every interval, the first time at once, until
// it has been called --count times (0: no end) or ctx ends (interrupted).
func refreshes(ctx context.Context, c *cli.Context, interval time.Duration, refresh func(n int) error) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 1; ; n++ {
		if err := refresh(n); err != nil {
			return err
		}
		if n == c.Int("count") {
			return nil
		}
		select {
		case <-ctx.Done():
			return interrupted()
		case <-tick.C:
		}
	}
}

// keepRecent adds more to the happenings the terminal view shows,
// keeping the last recentShown.
func keepRecent(recent, more []Happening) []Happening {
	recent = append(recent, more...)
	return recent[max(len(recent)-recentShown, 0):]
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// interrupted is how watch ends on Ctrl-C or SIGTERM: its normal end on
// a terminal, but with status 130 as docs/cli.md's table says, so that a
// script running watch --json can tell an interrupted watch from one that
// did its --count.
func interrupted() error { return cli.Exit("", base.ExitInterrupted) }
