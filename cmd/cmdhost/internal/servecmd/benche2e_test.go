package servecmd

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/bench/loadgen"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
)

// make bench-e2e: cmdhost against the barest executor paho.golang allows
// (internal/bench/rawecho), one run, same load generator
// (internal/bench/loadgen), on mosquitto and on the embedded broker
// (where the baseline runs on a bare embedded broker of the same
// library). It prints a table, the ratios to the baseline, a last line
// with the headline ratios, and rewrites its section of BENCHMARKS.md.

// benchRow is one executor measured at each number in flight.
type benchRow struct {
	broker, executor string
	topic, payload   string
	results          map[int]loadgen.Result
}

// benchInFlight are the numbers of requests in flight measured, and the
// requests timed at each (after a tenth of that untimed).
var benchInFlight = []struct{ w, n int }{{1, 2000}, {16, 20000}, {128, 40000}}

func TestBenchE2E(t *testing.T) {
	if os.Getenv("CMDHOST_BENCH_E2E") == "" {
		t.Skip("a measurement: make bench-e2e")
	}
	raw, rawFork := buildRawEcho(t, true), buildRawEcho(t, false)
	plugins := t.TempDir()
	for _, p := range []string{"echo", "wat-echo", "counter-idem"} {
		bin, err := os.ReadFile("../../../../testdata/plugins/" + p + ".wasm")
		if err != nil {
			t.Fatalf("%v (run `make plugins`)", err)
		}
		if err := os.WriteFile(filepath.Join(plugins, p+".wasm"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var rows []*benchRow
	for _, broker := range []string{"mosquitto", "embedded"} {
		var baseURL, forkURL, hostURL, memURL *url.URL
		if broker == "mosquitto" {
			baseURL = brokertest.StartMosquitto(t)
			hostURL = baseURL
			forkURL = baseURL
			memURL = baseURL
			clitest.LaunchServe(t, plugins, nil, "--broker", baseURL.String())
			// The same host with the outcomes in memory: what the durable
			// default (the outcome on disk before the reply) costs.
			clitest.LaunchServe(t, plugins, nil, "--broker", baseURL.String(), "--id", "cli-host-mem", "--state-dir", "off")
			startRawEcho(t, raw, "--broker", baseURL.String())
			startRawEcho(t, rawFork, "--broker", baseURL.String(), "--id", "rawecho-fork", "--topic", "rpc/raw-fork/echo")
		} else {
			addr, _, _ := clitest.LaunchServe(t, plugins, nil)
			hostURL = &url.URL{Scheme: "mqtt", Host: addr}
			memAddr, _, _ := clitest.LaunchServe(t, plugins, nil, "--id", "cli-host-mem", "--state-dir", "off")
			memURL = &url.URL{Scheme: "mqtt", Host: memAddr}
			baseAddr, forkAddr := clitest.FreeAddr(t), clitest.FreeAddr(t)
			baseURL = &url.URL{Scheme: "mqtt", Host: baseAddr}
			forkURL = &url.URL{Scheme: "mqtt", Host: forkAddr}
			startRawEcho(t, raw, "--embedded", baseAddr)
			startRawEcho(t, rawFork, "--embedded", forkAddr, "--topic", "rpc/raw-fork/echo")
		}
		group := []*benchRow{
			{broker: broker, executor: baselineExecutor, topic: "rpc/raw/echo", payload: "x"},
			{broker: broker, executor: "bare paho echo, cmdhost's paho", topic: "rpc/raw-fork/echo", payload: "x"},
			{broker: broker, executor: "cmdhost, Go echo", topic: "rpc/cli-host/echo", payload: "x"},
			{broker: broker, executor: memExecutor, topic: "rpc/cli-host-mem/echo", payload: "x"},
			{broker: broker, executor: "cmdhost, WAT echo", topic: "rpc/cli-host/wat-echo", payload: "x"},
			{broker: broker, executor: "cmdhost, reuse hit", topic: "rpc/cli-host/counter-idem", payload: "x"},
		}
		for _, r := range group {
			r.results = map[int]loadgen.Result{}
		}
		// Each number in flight measures every row in turn, so that the
		// machine's drift over the run touches them alike.
		for _, f := range benchInFlight {
			for i, r := range group {
				u := hostURL
				switch {
				case i == 0:
					u = baseURL
				case i == 1:
					u = forkURL
				case r.executor == memExecutor:
					u = memURL
				}
				res, err := loadgen.Run(context.Background(), loadgen.Config{Broker: u, Topic: r.topic,
					Payload: []byte(strings.Repeat(r.payload, 64)), Requests: f.n, Warmup: f.n / 10, InFlight: f.w})
				if err != nil {
					t.Fatalf("%s, %s, W=%d: %v", broker, r.executor, f.w, err)
				}
				r.results[f.w] = res
			}
		}
		rows = append(rows, group...)
	}
	table := benchTable(rows)
	fmt.Print(table)
	if err := rewriteBenchSection("../../../../BENCHMARKS.md", table); err != nil {
		t.Error(err)
	}
}

// baselineExecutor is the baseline's row: rawecho built against
// paho.golang as released.
const baselineExecutor = "baseline (bare paho echo)"

// memExecutor is the row of the host whose outcomes are in memory
// (--state-dir off), beside the default's, on disk.
const memExecutor = "cmdhost, Go echo, outcomes in memory"

// buildRawEcho builds rawecho against paho.golang as released (upstream:
// with a copy of go.mod less its replace of paho.golang by third_party,
// and a copy of go.sum the go command completes), or against cmdhost's
// copy.
func buildRawEcho(t *testing.T, upstream bool) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "rawecho")
	args := []string{"build", "-o", bin}
	if upstream {
		mod, err := os.ReadFile("../../../../go.mod")
		if err != nil {
			t.Fatal(err)
		}
		sum, err := os.ReadFile("../../../../go.sum")
		if err != nil {
			t.Fatal(err)
		}
		upstreamMod := regexp.MustCompile(`(?m)^replace github.com/eclipse/paho.golang .*$`).ReplaceAll(mod, nil)
		if len(upstreamMod) == len(mod) {
			t.Fatal("go.mod has no replace of paho.golang: update buildRawEcho")
		}
		if err := os.WriteFile(filepath.Join(dir, "upstream.mod"), upstreamMod, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "upstream.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-mod=mod", "-modfile="+filepath.Join(dir, "upstream.mod"))
	}
	out, err := exec.Command("go", append(args, "../../../../internal/bench/rawecho")...).CombinedOutput()
	if err != nil {
		t.Fatalf("building rawecho (upstream paho: %v): %v\n%s", upstream, err, out)
	}
	if out, err := exec.Command("go", "version", "-m", bin).Output(); err != nil || strings.Contains(string(out), "=>") == upstream {
		t.Fatalf("rawecho (upstream paho: %v) was built with:\n%s", upstream, out)
	}
	return bin
}

// startRawEcho starts the baseline executor with args and waits until it
// serves; it is stopped when the test ends.
func startRawEcho(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "msg=serving") {
			go func() { // keep reading: never block its log
				for sc.Scan() {
				}
			}()
			return
		}
	}
	t.Fatalf("rawecho %v exited before serving", args)
}

// benchTable formats the rows: one line per executor and number in
// flight, with the ratio of its rate (and p50 at W=1) to its broker's
// baseline, then the headline.
func benchTable(rows []*benchRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Commit %s, %s, %d cores, %s, %s.\n\n", benchCommit(), cpuModel(), runtime.NumCPU(), runtime.Version(),
		time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| broker | executor | W | req/s | p50 ms | p99 ms | rate / baseline | p50 / baseline |\n|---|---|---|---|---|---|---|---|\n")
	baseline := map[string]*benchRow{}
	for _, r := range rows {
		if r.executor == baselineExecutor {
			baseline[r.broker] = r
		}
		for _, f := range benchInFlight {
			res, base := r.results[f.w], baseline[r.broker].results[f.w]
			fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f |\n", r.broker, r.executor, f.w, res.Rate(),
				ms(res.P50), ms(res.P99), res.Rate()/base.Rate(), ms(res.P50)/ms(base.P50))
		}
	}
	b.WriteString("\n")
	mem := map[string]*benchRow{}
	for _, r := range rows {
		if r.executor == memExecutor {
			mem[r.broker] = r
		}
	}
	for _, r := range slices.Backward(rows) { // mosquitto's last
		if r.executor == "cmdhost, Go echo" {
			base := baseline[r.broker].results
			fmt.Fprintf(&b, "bench-e2e: cmdhost/baseline = %.2f at W=16, %.2f at W=128 (%s)\n", r.results[16].Rate()/base[16].Rate(),
				r.results[128].Rate()/base[128].Rate(), r.broker)
			if m := mem[r.broker]; m != nil {
				fmt.Fprintf(&b, "bench-e2e: outcomes on disk / in memory = %.2f at W=16, %.2f at W=128 (%s)\n",
					r.results[16].Rate()/m.results[16].Rate(), r.results[128].Rate()/m.results[128].Rate(), r.broker)
			}
		}
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func benchCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	// The table's own file does not count: a second run finds the first's.
	if st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(top,exclude)BENCHMARKS.md").Output(); len(st) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	if m := regexp.MustCompile(`model name\s*:\s*(.+)`).FindSubmatch(b); m != nil {
		return strings.TrimSpace(string(m[1]))
	}
	return runtime.GOARCH
}

// Markers of the section make bench-e2e rewrites in BENCHMARKS.md.
const (
	benchStart = "<!-- bench-e2e: start (make bench-e2e rewrites what follows) -->"
	benchEnd   = "<!-- bench-e2e: end -->"
)

// rewriteBenchSection replaces the text between the markers in path
// with table.
func rewriteBenchSection(path, table string) error {
	return rewriteSection(path, benchStart, benchEnd, table)
}

// rewriteSection replaces the text between the markers start and end in
// path with text.
func rewriteSection(path, start, end, text string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, start), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no section between %q and %q to rewrite", path, start, end)
	}
	s = s[:i+len(start)] + "\n" + text + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
