package clientcmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/plugincmd"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/rpc"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// What a host or any publisher sends reaches the operator's terminal
// without its control characters: an escape sequence cannot clear the
// screen or move the cursor.
func TestShownOnTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain text é":     "plain text é",
		"\x1b[2Jcleared":   "\uFFFD[2Jcleared",
		"bell\a and\r\ncr": "bell\uFFFD and\uFFFD\uFFFDcr",
		"c1 \u009b31m":     "c1 \uFFFD31m",
		"bad \xff byte":    "bad \uFFFD byte",
		"":                 "",
	} {
		if got := base.Shown(in); got != want {
			t.Errorf("shown(%q) = %q; want %q", in, got, want)
		}
	}

	var out bytes.Buffer
	printReplyInfo(&out, &rpc.Result{Status: 500, Message: "\x1b]0;owned\a", Metadata: map[string]string{"k\x1b": "v\x1b[H"}}, time.Millisecond)
	w := &watcher{executor: "h"}
	for range maxPending + 10 { // a flood between two frames is bounded
		w.noteEvent([]byte(`{"kind":"timeout","command":"x","type":"expiry","time":"2026-11-25T00:00:00Z"}`))
	}
	w.noteEvent([]byte(`{"kind":"timeout","command":"c\u001b[2J","type":"expiry","time":"2026-11-25T00:00:01Z"}`))
	if len(w.pending) != maxPending {
		t.Errorf("%d happenings kept between frames; want at most %d", len(w.pending), maxPending)
	}
	st := admin.Stats{Plugins: []admin.PluginView{{PluginStatus: pluginmgr.PluginStatus{Name: "p", State: pluginmgr.StateServing, LastError: "\x1b[31mred"}}}}
	f := w.frame(st, time.Now())
	last := f.Happenings[len(f.Happenings)-1:]
	if last[0].Command != "c\x1b[2J" {
		t.Fatalf("the last event is %+v", last[0])
	}
	printFrame(&out, watchWidth, f, "mqtt://b", time.Second, last, true)
	// plugin list and hosts, on what a host answers.
	_ = plugincmd.PrintPluginTable(&out, []admin.PluginView{{PluginStatus: pluginmgr.PluginStatus{Name: "p", State: "\x1b[2J", Digest: "\x1b]0;owned\a"}}})
	out.WriteString(pluginVersion{Name: "p", State: "\x1b[2J"}.String())
	out.WriteString(pluginVersion{Name: "p", State: pluginmgr.StateServing, Digest: "\x1b[2Jxxxxxxxx"}.String())
	// The frame's own clearing sequence is the only escape.
	if got := strings.Replace(out.String(), "\x1b[H\x1b[2J", "", 1); strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("control characters reach the terminal:\n%q", got)
	}
}

// watch's terminal view fits its width (the terminal's, at least 80
// columns; 100 off a terminal), whatever the names, numbers and errors:
// long ones are cut with an ellipsis, the header is wrapped whole (issue
// 39), and the plugins' totals are shown.
func TestWatchFitsItsWidth(t *testing.T) {
	long := strings.Repeat("a-very-long-plugin-name-", 4)
	f := WatchFrame{Time: time.Now(), Executor: strings.Repeat("replica-", 12),
		ReplicaID: admin.ReplicaID{ClientID: strings.Repeat("client-", 5), Share: strings.Repeat("group-", 2)}, Plugins: []watchPlugin{
			{Name: long, State: "serving", Instances: 123456, InFlight: 1234567890, CallsPerSec: 123456789.5, ErrorsPerSec: 98765.4,
				P50Ms: 0.21, P99Ms: 123456, FuelPerCall: 4_500_000, Reloads: 12345678, LastError: strings.Repeat("the guest said no; ", 10),
				StateKeys: 100_000, StateBytes: 67_108_864, Calls: 7_000_000_000, Errors: 12},
			{Name: "echo", State: "serving", Instances: 4, CallsPerSec: 1234.5, P50Ms: 12.34, P99Ms: 456.7, StateKeys: 3, StateBytes: 987, Calls: 40, Errors: 3},
		}}
	recent := []Happening{{Time: time.Now(), Kind: "timeout", Plugin: long, Command: long, Detail: strings.Repeat("execution 2s of 2s, ", 6)}}
	broker := "mqtt://" + strings.Repeat("broker.example.com.", 5) + ":1883"
	if got := viewWidth(&bytes.Buffer{}); got != offTerminalWidth {
		t.Errorf("width off a terminal: %d, want %d", got, offTerminalWidth)
	}
	for _, width := range []int{watchWidth, offTerminalWidth, 200} {
		var out bytes.Buffer
		printFrame(&out, width, f, broker, time.Second, recent, false)
		// watch --all: a block per replica.
		var all bytes.Buffer
		printAllFrame(&all, width, watchAllFrame{Time: time.Now(), Executor: f.Executor, Replicas: []WatchFrame{f, f}}, broker, time.Second, recent, false)
		for line := range strings.Lines(strings.TrimPrefix(out.String(), "\x1b[H\x1b[2J") + strings.TrimPrefix(all.String(), "\x1b[H\x1b[2J")) {
			if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > width {
				t.Errorf("%d columns, over %d: %q", n, width, line)
			}
		}
		for _, view := range []string{out.String(), all.String()} {
			head := view[:strings.Index(view, "\n\n")]
			// A name longer than a line is cut; the rest is all there.
			on := "on " + broker
			if width < len(on)+3 {
				on = on[:width-4] + "…"
			}
			if !strings.Contains(head, on) || !strings.Contains(head, "every 1s (Ctrl-C quits)") {
				t.Errorf("%d columns: the header is cut:\n%s", width, head)
			}
		}
		if !strings.Contains(out.String(), "replica client-client-") || !strings.Contains(out.String(), "(share group group-") ||
			strings.Count(all.String(), "replica client-client-") != 2 {
			t.Errorf("the views do not name the replicas:\n%s\n%s", out.String(), all.String())
		}
		for _, want := range []string{"a-very-long-pl…", "1.2G", "123M", "123k", "123.5s", "the guest said no", "12.3ms", "457ms", "0.21ms", "4.5M", " 67M\n", " 987\n",
			"total 123M calls/s, 98765.4 err/s; 7.0G calls, 15 errors since start\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the view lacks %q:\n%s", want, out.String())
			}
		}
	}
}
