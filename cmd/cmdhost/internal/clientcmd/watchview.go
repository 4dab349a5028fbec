package clientcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/events"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// WatchFrame is one refresh of `cmdhost watch`: each plugin with its
// rates since the frame before, and what happened since (--json prints
// one per line). Rates are 0 in the first frame: there is no frame before.
type WatchFrame struct {
	Time     time.Time `json:"time"`
	Executor string    `json:"executor"`
	// ReplicaID is the replica that answered (its client id and share
	// group).
	admin.ReplicaID
	Plugins []watchPlugin `json:"plugins"`
	// Triggers are the plugins' triggers with their rates since the frame
	// before (none: [] in JSON).
	Triggers []WatchTrigger `json:"triggers"`
	// Happenings are the timeouts (from the host's events, with serve
	// --events) and reloads (seen as a new digest) since the last frame;
	// the terminal view keeps the last few.
	Happenings  []Happening `json:"happenings"`
	ReuseHits   int64       `json:"reuseHits"`
	ReuseMisses int64       `json:"reuseMisses"`
}

type watchPlugin struct {
	Name         string  `json:"name"`
	State        string  `json:"state"`
	Digest       string  `json:"digest,omitempty"`
	Instances    int64   `json:"instances"`
	InFlight     int     `json:"inFlight"`
	Calls        int64   `json:"calls"`
	Errors       int64   `json:"errors"`
	CallsPerSec  float64 `json:"callsPerSec"`
	ErrorsPerSec float64 `json:"errorsPerSec"`
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	FuelPerCall  int64   `json:"fuelPerCall"` // mean work units of its calls (docs/plugins.md, Fuel)
	Reloads      int     `json:"reloads"`
	LastError    string  `json:"lastError,omitempty"`
	// StateKeys and StateBytes are what the plugin's state namespace
	// holds (admin.PluginView).
	StateKeys  int64 `json:"stateKeys"`
	StateBytes int64 `json:"stateBytes"`
}

// WatchTrigger is a trigger as watch shows it: its messages, failed
// attempts and drops, and their rates.
type WatchTrigger struct {
	Name           string  `json:"name"`
	Plugin         string  `json:"plugin"`
	Topic          string  `json:"topic"`
	State          string  `json:"state"`
	InFlight       int64   `json:"inFlight"`
	Messages       int64   `json:"messages"`
	Handled        int64   `json:"handled"`
	Failures       int64   `json:"failures"`
	Dropped        int64   `json:"dropped"`
	Duplicates     int64   `json:"duplicates"`
	MessagesPerSec float64 `json:"messagesPerSec"`
	FailuresPerSec float64 `json:"failuresPerSec"`
	DropsPerSec    float64 `json:"dropsPerSec"`
}

// Happening is a timeout or a reload, as watch shows it.
type Happening struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"` // events.KindTimeout, events.KindBudgetWarning, events.KindAdmin, events.KindTriggerDrop or "reload"
	Plugin  string    `json:"plugin,omitempty"`
	Command string    `json:"command,omitempty"`
	Detail  string    `json:"detail"`
}

// watcher turns the host's stats and events into frames. Events arrive on
// paho's goroutine (noteEvent); frames are made on watch's (frame): mu
// guards what both touch.
type watcher struct {
	executor string
	last     map[string]admin.PluginView
	lastTrig map[string]pluginmgr.TriggerStatus
	lastAt   time.Time

	mu      sync.Mutex
	pending []Happening // since the last frame
}

// maxPending bounds the happenings kept between two frames.
const maxPending = 1000

// noteEvent records a timeout event's payload; one that does not decode
// is dropped (it is not the host's).
func (w *watcher) noteEvent(payload []byte) {
	var ev events.Event
	if json.Unmarshal(payload, &ev) != nil || ev.Kind == "" {
		return
	}
	h := Happening{Time: ev.Time, Kind: ev.Kind, Plugin: ev.Plugin, Command: ev.Command,
		Detail: fmt.Sprintf("%s %v of %v", ev.Type, time.Duration(ev.ElapsedMS)*time.Millisecond, time.Duration(ev.BudgetMS)*time.Millisecond)}
	if ev.Kind == events.KindAdmin { // an admin op's audit: what, by whom, and what came of it
		who := ev.Invoker
		if ev.User != "" {
			who = "user " + ev.User
		}
		h.Detail = strings.TrimSpace(fmt.Sprintf("%s %s %s by %s %s", ev.Op, ev.Verdict, base.Short(ev.Digest), who, ev.Reason))
	}
	if ev.Kind == events.KindTriggerDrop { // a message dropped: after how many runs, and why
		h.Detail = fmt.Sprintf("dropped after %d attempts: %s", ev.Attempt, ev.Reason)
		if ev.Attempt == 0 {
			h.Detail = "dropped unrun: " + ev.Reason
		}
		ev.Attempt = 0
	}
	if ev.Policy != "" {
		h.Detail += ", " + string(ev.Policy)
	}
	if ev.Attempt > 1 {
		h.Detail += fmt.Sprintf(", attempt %d", ev.Attempt)
	}
	w.mu.Lock()
	// Anyone on the broker may publish on the events topic: what arrives
	// between two frames is bounded, the oldest dropped.
	if len(w.pending) == maxPending {
		w.pending = w.pending[1:] // append moves the rest once the array is used up: no copy per event
	}
	w.pending = append(w.pending, h)
	w.mu.Unlock()
}

// frame makes the frame of stats read at now.
func (w *watcher) frame(st admin.Stats, now time.Time) WatchFrame {
	f := WatchFrame{Time: now, Executor: w.executor, ReplicaID: st.ReplicaID, Plugins: []watchPlugin{}, ReuseHits: st.Reuse.Hits, ReuseMisses: st.Reuse.Misses}
	secs := now.Sub(w.lastAt).Seconds()
	var reloads []Happening
	for _, v := range st.Plugins {
		p := watchPlugin{Name: v.Name, State: string(v.State), Digest: base.Short(v.Digest), Instances: v.Instances, InFlight: v.InUse,
			Calls: v.Calls, Errors: v.Failures + v.ErrorReplies, P50Ms: v.P50Ms, P99Ms: v.P99Ms, FuelPerCall: v.Fuel.PerCall(), Reloads: v.Reloads, LastError: v.LastError,
			StateKeys: v.StateKeys, StateBytes: v.StateBytes}
		if before, ok := w.last[v.Name]; ok && secs > 0 {
			p.CallsPerSec = float64(max(v.Calls-before.Calls, 0)) / secs
			p.ErrorsPerSec = float64(max(v.Failures+v.ErrorReplies-before.Failures-before.ErrorReplies, 0)) / secs
			if v.Digest != before.Digest && v.Digest != "" {
				reloads = append(reloads, Happening{Time: now, Kind: "reload", Plugin: v.Name,
					Detail: fmt.Sprintf("%s → %s", base.Short(before.Digest), base.Short(v.Digest))})
			}
		}
		f.Plugins = append(f.Plugins, p)
	}
	f.Triggers = w.triggers(st.Plugins, secs)
	w.last = make(map[string]admin.PluginView, len(st.Plugins))
	for _, v := range st.Plugins {
		w.last[v.Name] = v
	}
	w.lastAt = now
	f.Happenings = append(w.drain(), reloads...)
	slices.SortStableFunc(f.Happenings, func(a, b Happening) int { return a.Time.Compare(b.Time) })
	if f.Happenings == nil {
		f.Happenings = []Happening{}
	}
	return f
}

// triggers makes the frame's triggers of the plugins' views, with their
// rates over secs since the last frame (0 in the first).
func (w *watcher) triggers(views []admin.PluginView, secs float64) []WatchTrigger {
	out := []WatchTrigger{}
	now := map[string]pluginmgr.TriggerStatus{}
	for _, v := range views {
		for _, t := range v.Triggers {
			now[t.Name] = t
			wt := WatchTrigger{Name: t.Name, Plugin: v.Name, Topic: t.Topic, State: string(t.State), InFlight: t.InFlight,
				Messages: t.Messages, Handled: t.Handled, Failures: t.Failures, Dropped: t.Dropped, Duplicates: t.Duplicates}
			if before, ok := w.lastTrig[t.Name]; ok && secs > 0 {
				wt.MessagesPerSec = float64(max(t.Messages-before.Messages, 0)) / secs
				wt.FailuresPerSec = float64(max(t.Failures-before.Failures, 0)) / secs
				wt.DropsPerSec = float64(max(t.Dropped-before.Dropped, 0)) / secs
			}
			out = append(out, wt)
		}
	}
	w.lastTrig = now
	return out
}

// drain returns the happenings noted since the last frame.
func (w *watcher) drain() []Happening {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pending
	w.pending = nil
	return p
}

// recentShown is how many happenings the terminal view keeps.
const recentShown = 10

// watchWidth is the narrowest the terminal view gets: its tables are 79
// columns. Every line fits the view's width (viewWidth); longer names and
// texts are cut with an ellipsis, the header is wrapped.
const watchWidth = 80

// offTerminalWidth is the view's width on what is not a terminal, or one
// whose size is not known.
const offTerminalWidth = 100

// viewWidth is the width of the view on w: the terminal's, at least
// watchWidth; offTerminalWidth when w is no terminal.
func viewWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return max(cols, watchWidth)
		}
	}
	return offTerminalWidth
}

// header writes the view's first lines: its parts joined by ", ",
// wrapped to width, each line after the first indented (a part longer
// than a line alone is cut with an ellipsis).
func header(w io.Writer, width int, parts ...string) {
	line := ""
	for _, p := range parts {
		p = base.Clip(p, width-3) // room for the indent and the comma
		switch {
		case line == "":
			line = p
		case utf8.RuneCountInString(line)+2+utf8.RuneCountInString(p) < width: // and a comma
			line += ", " + p
		default:
			fmt.Fprintln(w, line+",")
			line = "  " + p
		}
	}
	fmt.Fprintln(w, line)
}

// hostParts are the header's parts that name the host and the broker:
// one, "HOST on BROKER", when it fits width, else two.
func hostParts(host, on string, width int) []string {
	if utf8.RuneCountInString(host)+1+utf8.RuneCountInString(on) <= width {
		return []string{host + " " + on}
	}
	return []string{host, on}
}

// printFrame draws a frame on a terminal of width columns, in place: the
// cursor home and the screen cleared first. recent are the happenings to
// show, oldest first.
func printFrame(w io.Writer, width int, f WatchFrame, broker string, interval time.Duration, recent []Happening, sawEvent bool) {
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	header(w, width, append(hostParts("cmdhost watch: host "+base.Shown(f.Executor), "on "+broker, width),
		f.Time.Format("15:04:05"), fmt.Sprintf("every %v (Ctrl-C quits)", interval))...)
	// The replica that answered, on a line of its own.
	if r := hostconn.ReplicaLine(f.Executor, f.ReplicaID); r != "" {
		fmt.Fprintln(w, base.Clip(r, width))
	}
	fmt.Fprintln(w)
	failing := printPluginRows(w, f.Plugins)
	printTriggerRows(w, f.Triggers)
	printTail(w, width, f, failing, recent, sawEvent)
}

// printPluginRows writes the table of plugins and returns those with a
// last error.
func printPluginRows(w io.Writer, plugins []watchPlugin) []watchPlugin {
	// BUSY: the calls in flight; DATA: the bytes of the plugin's state
	// namespace.
	const row = "%-15s %-8s %4s %4s %7s %5s %7s %7s %5s %3s %4s\n" // 79 columns
	fmt.Fprintf(w, row, "NAME", "STATE", "INST", "BUSY", "CALLS/S", "ERR/S", "P50", "P99", "FUEL", "RLD", "DATA")
	var failing []watchPlugin
	for _, p := range plugins {
		p50, p99 := "-", "-" // no call of the version serving, no latency
		if p.P99Ms > 0 {
			p50, p99 = latency(p.P50Ms), latency(p.P99Ms)
		}
		data := "-" // no key
		if p.StateKeys > 0 {
			data = count(p.StateBytes, 4)
		}
		fmt.Fprintf(w, row, base.Clip(base.Shown(p.Name), 15), base.Clip(base.Shown(p.State), 8), count(p.Instances, 4), count(int64(p.InFlight), 4),
			rate(p.CallsPerSec, 7), rate(p.ErrorsPerSec, 5), p50, p99, fuelCol(p.FuelPerCall), count(int64(p.Reloads), 3), data)
		if p.LastError != "" {
			failing = append(failing, p)
		}
	}
	printTotals(w, plugins)
	return failing
}

// printTotals writes the sums of the plugins' rows: the calls and errors
// since the host started, and their rates now.
func printTotals(w io.Writer, plugins []watchPlugin) {
	var calls, errs int64
	var callRate, errRate float64
	for _, p := range plugins {
		calls, errs = calls+p.Calls, errs+p.Errors
		callRate, errRate = callRate+p.CallsPerSec, errRate+p.ErrorsPerSec
	}
	fmt.Fprintf(w, "total %s calls/s, %s err/s; %s calls, %s errors since start\n",
		rate(callRate, 7), rate(errRate, 7), count(calls, 9), count(errs, 9))
}

// printTriggerRows writes the table of triggers, when there are any.
func printTriggerRows(w io.Writer, triggers []WatchTrigger) {
	if len(triggers) == 0 {
		return
	}
	const row = "%-15s %-12s %9s %7s %6s %7s %8s %8s\n" // 79 columns
	fmt.Fprintf(w, "\n"+row, "TRIGGER", "STATE", "IN FLIGHT", "MSGS/S", "FAIL/S", "DROPS/S", "HANDLED", "DROPPED")
	for _, t := range triggers {
		fmt.Fprintf(w, row, base.Clip(base.Shown(t.Name), 15), base.Clip(base.Shown(t.State), 12), count(t.InFlight, 9), rate(t.MessagesPerSec, 7),
			rate(t.FailuresPerSec, 6), rate(t.DropsPerSec, 7), count(t.Handled, 8), count(t.Dropped, 8))
	}
}

// printTail writes the last errors of failing, the reuse cache's counters
// of f and the recent happenings, in width columns.
func printTail(w io.Writer, width int, f WatchFrame, failing []watchPlugin, recent []Happening, sawEvent bool) {
	if len(failing) > 0 {
		fmt.Fprintln(w, "\nlast errors:")
		for _, p := range failing {
			fmt.Fprintln(w, base.Clip(fmt.Sprintf("  %s: %s", base.Clip(base.Shown(p.Name), 20), base.Shown(p.LastError)), width))
		}
	}
	fmt.Fprintf(w, "\nreuse cache: %d hits, %d misses\n\nrecent timeouts and reloads:\n", f.ReuseHits, f.ReuseMisses)
	if len(recent) == 0 {
		fmt.Fprintln(w, "  none yet")
	}
	for _, h := range slices.Backward(recent) {
		what := h.Plugin
		if h.Command != "" {
			what += "/" + h.Command
		}
		fmt.Fprintln(w, base.Clip(fmt.Sprintf("  %s  %-14s %-20s %s", h.Time.Local().Format("15:04:05"), base.Clip(base.Shown(h.Kind), 14), base.Clip(base.Shown(what), 20), base.Shown(h.Detail)), width))
	}
	if !sawEvent {
		fmt.Fprintln(w, "  (timeouts show only from a host started with serve --events)")
	}
}

// count writes v in width columns, as 123k, 1.2G when it would not fit.
func count(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	if len(s) <= width {
		return s
	}
	units := []struct {
		div    float64
		suffix string
	}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}}
	for i, u := range units {
		f := float64(v) / u.div
		if f >= 999.5 && i < len(units)-1 {
			continue
		}
		if s = strconv.FormatFloat(f, 'f', 1, 64) + u.suffix; len(s) > width || f >= 10 {
			s = strconv.FormatFloat(f, 'f', 0, 64) + u.suffix
		}
		break
	}
	return s
}

// rate writes a per-second rate in width columns.
func rate(v float64, width int) string {
	if s := strconv.FormatFloat(v, 'f', 1, 64); len(s) <= width {
		return s
	}
	return count(int64(v), width)
}

// latency writes a latency in milliseconds in at most 7 columns:
// 0.21ms, 12.3ms, 456ms, 12.3s.
func latency(ms float64) string {
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	case ms < 10_000:
		return fmt.Sprintf("%.0fms", ms)
	case ms < 1_000_000:
		return fmt.Sprintf("%.1fs", ms/1000)
	default:
		return fmt.Sprintf("%.0fs", ms/1000)
	}
}

// fuelCol shows a plugin's mean fuel per call in 5 columns ("-" for none).
func fuelCol(n int64) string {
	if n <= 0 {
		return "-"
	}
	return base.Clip(hostconn.Units(n), 5)
}
