package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
		if got := shown(in); got != want {
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
	printFrame(&out, f, "mqtt://b", time.Second, last, true)
	// The frame's own clearing sequence is the only escape.
	if got := strings.Replace(out.String(), "\x1b[H\x1b[2J", "", 1); strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("control characters reach the terminal:\n%q", got)
	}
}
