// Package testprogress turns `go test -json` into the few lines a person
// watching `make test` wants: a line per package as it ends (ok or FAIL,
// and how long), the output of the tests that failed, and, while
// packages run, a line each Interval saying which are running and in
// which test. `go test ./...` alone says nothing about a package until it
// ends: cmd/cmdhost ran 514 s without a line on a loaded 2-core machine,
// and -v would print thousands.
package testprogress

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// Progress reads events and writes the summary. Its methods are safe for
// concurrent use: Read runs in one goroutine, Tick in another (a ticker).
type Progress struct {
	out    io.Writer
	prefix string // trimmed off package paths: the module's

	mu       sync.Mutex
	running  map[string]*pkgRun // by package
	failures int
}

// pkgRun is a running package: its tests running (name → start) and
// each test's output, kept until it passes.
type pkgRun struct {
	start   time.Time
	tests   map[string]time.Time
	output  map[string][]string // by test; "" is the package's own
	outSize int
}

// maxKept bounds the output kept for one package: a failing test's last
// lines are shown, a chatty passing package costs no more than this.
const maxKept = 1 << 20

// New is a Progress writing to out, package paths shown without prefix.
func New(out io.Writer, prefix string) *Progress {
	return &Progress{out: out, prefix: prefix, running: map[string]*pkgRun{}}
}

// Failed reports whether a test or a package failed.
func (p *Progress) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures > 0
}

// Read consumes the events of r until it ends; a line that is no event
// (go test's own errors) is written through.
func (p *Progress) Read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			p.mu.Lock()
			fmt.Fprintln(p.out, sc.Text())
			p.mu.Unlock()
			continue
		}
		p.handle(e)
	}
	return sc.Err()
}

func (p *Progress) handle(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Package == "" { // build output of a package that failed to build
		if e.Output != "" {
			fmt.Fprint(p.out, e.Output)
		}
		return
	}
	run := p.running[e.Package]
	if run == nil {
		run = &pkgRun{start: e.Time, tests: map[string]time.Time{}, output: map[string][]string{}}
		p.running[e.Package] = run
	}
	switch e.Action {
	case "run":
		run.tests[e.Test] = e.Time
	case "output":
		if run.outSize < maxKept {
			run.output[e.Test] = append(run.output[e.Test], e.Output)
			run.outSize += len(e.Output)
		}
	case "pass", "skip":
		if e.Test != "" {
			delete(run.tests, e.Test)
			delete(run.output, e.Test)
			return
		}
		delete(p.running, e.Package)
		if e.Action == "skip" { // no test files
			return
		}
		fmt.Fprintf(p.out, "ok    %s  %.1fs\n", p.short(e.Package), e.Elapsed)
	case "fail":
		p.failures++
		if e.Test != "" {
			delete(run.tests, e.Test)
			fmt.Fprintf(p.out, "--- FAIL: %s (%s, %.1fs)\n%s", e.Test, p.short(e.Package), e.Elapsed, strings.Join(run.output[e.Test], ""))
			delete(run.output, e.Test)
			return
		}
		fmt.Fprintf(p.out, "%s", strings.Join(run.output[""], ""))
		fmt.Fprintf(p.out, "FAIL  %s  %.1fs\n", p.short(e.Package), e.Elapsed)
		delete(p.running, e.Package)
	}
}

// Tick writes, when packages are running, one line naming each with how
// long it has run and its longest-running test: "running: cmd/cmdhost
// 4m0s (TestDev 1m10s), host 30s".
func (p *Progress) Tick(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.running) == 0 {
		return
	}
	var parts []string
	for pkg, run := range p.running {
		s := fmt.Sprintf("%s %s", p.short(pkg), now.Sub(run.start).Round(time.Second))
		var oldest string
		var since time.Time
		for name, start := range run.tests {
			// The outermost test: a subtest's parent runs as long.
			if strings.Contains(name, "/") && run.tests[name[:strings.Index(name, "/")]] != (time.Time{}) {
				continue
			}
			if oldest == "" || start.Before(since) {
				oldest, since = name, start
			}
		}
		if oldest != "" {
			s += fmt.Sprintf(" (%s %s)", oldest, now.Sub(since).Round(time.Second))
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	fmt.Fprintf(p.out, "running: %s\n", strings.Join(slices.Compact(parts), ", "))
}

func (p *Progress) short(pkg string) string {
	if s := strings.TrimPrefix(pkg, p.prefix); s != pkg {
		return strings.TrimPrefix(s, "/")
	}
	return pkg
}
