package servecmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/bench/fleet"
	"github.com/cmdhost/cmdhost/internal/bench/loadgen"
)

// make bench-scale: how cmdhost's cost grows with the work it is given,
// measured on the real binary, one run. Four curves: start time and
// memory against the number of plugins (WAT and Go guests, cold and warm
// compilation cache); memory and p99 against the embedded broker's idle
// and active clients; throughput and p99 against the payload's size; and
// against the number of commands called at random among 1,000 plugins.
// Memory and CPU time are read from /proc (robust to the machine's load);
// times from the wall clock, with the load average printed beside them.
// It prints the tables and rewrites its section of BENCHMARKS.md.

func TestBenchScale(t *testing.T) {
	if os.Getenv("CMDHOST_BENCH_SCALE") == "" {
		t.Skip("a measurement: make bench-scale")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Commit %s, %s, %d cores, %s, %s; load average at the start %s.\n\n", benchCommit(), cpuModel(),
		runtime.NumCPU(), runtime.Version(), time.Now().UTC().Format("2006-01-02"), loadAvg())
	wat, err := os.ReadFile("../../../../testdata/plugins/wat-echo.wasm")
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	// CMDHOST_BENCH_SCALE_ONLY=plugins,clients,payload,commands runs
	// those curves only, and rewrites nothing; CMDHOST_BENCH_SCALE_BINARY
	// measures another cmdhost binary (one built from another commit).
	only := os.Getenv("CMDHOST_BENCH_SCALE_ONLY")
	runs := func(curve string) bool { return only == "" || slices.Contains(strings.Split(only, ","), curve) }
	if bin := os.Getenv("CMDHOST_BENCH_SCALE_BINARY"); bin != "" {
		clitest.Binary = bin
		b.WriteString("Binary " + bin + ".\n\n")
	}
	if runs("plugins") {
		b.WriteString(scalePlugins(t, wat, buildGoEcho(t)))
	}
	if runs("clients") {
		b.WriteString(scaleClients(t))
	}
	if runs("payload") {
		b.WriteString(scalePayload(t))
	}
	if runs("commands") {
		b.WriteString(scaleCommands(t, wat))
	}
	fmt.Print(b.String())
	if only != "" || os.Getenv("CMDHOST_BENCH_SCALE_BINARY") != "" {
		return
	}
	if err := rewriteSection("../../../../BENCHMARKS.md", scaleStart, scaleEnd, b.String()); err != nil {
		t.Error(err)
	}
}

// Markers of the section make bench-scale rewrites in BENCHMARKS.md.
const (
	scaleStart = "<!-- bench-scale: start (make bench-scale rewrites what follows) -->"
	scaleEnd   = "<!-- bench-scale: end -->"
)

// scalePlugins is the first curve: a host started on N copies of a guest,
// from an empty compilation cache and again from the one the first start
// filled. Go guests stop at CMDHOST_BENCH_SCALE_GO (default 10): each
// copy compiles for 1.5 s of CPU and holds ~23 MiB warm, so that 100 cold
// take minutes on two cores, 1,000 a quarter of an hour and 23 GiB.
func scalePlugins(t *testing.T, wat, goGuest []byte) string {
	var b strings.Builder
	b.WriteString("### Start against the number of plugins\n\n" +
		"| guest | plugins | cache | serving after s | CPU s | compiled | RSS MiB | RSS per plugin KiB | load |\n|---|---|---|---|---|---|---|---|---|\n")
	empty := startHost(t, t.TempDir(), t.TempDir())
	base := empty.rss
	empty.stop()
	fmt.Fprintf(&b, "| none | 0 | - | %.2f | %.2f | 0 | %.1f | - | %s |\n", empty.ready.Seconds(), empty.cpu.Seconds(), mibOf(base), loadAvg())
	goMax := 10
	if s := os.Getenv("CMDHOST_BENCH_SCALE_GO"); s != "" {
		goMax, _ = strconv.Atoi(s)
	}
	for _, g := range []struct {
		name     string
		module   []byte
		marker   string
		copyName func(int) string
		max      int
	}{{"WAT echo", wat, fleet.WATMarker, fleet.WATName, 1000}, {"Go echo", goGuest, fleet.GoMarker, fleet.GoName, goMax}} {
		for _, n := range []int{10, 100, 1000} {
			if n > g.max {
				continue
			}
			dir, cache := t.TempDir(), t.TempDir()
			if _, err := fleet.Write(dir, g.module, g.marker, n, g.copyName); err != nil {
				t.Fatal(err)
			}
			for _, warm := range []bool{false, true} {
				h := startHost(t, dir, cache)
				h.stop()
				which := "cold"
				if warm {
					which = "warm"
				}
				fmt.Fprintf(io.MultiWriter(&b, os.Stdout), "| %s | %d | %s | %.2f | %.2f | %d | %.1f | %.0f | %s |\n", g.name, n, which, h.ready.Seconds(),
					h.cpu.Seconds(), h.compiled, mibOf(h.rss), float64(h.rss-base)/float64(n)/1024, loadAvg())
			}
			_ = os.RemoveAll(dir)
			_ = os.RemoveAll(cache)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// scaleClients is the second curve: idle clients of the embedded broker
// connected in steps (each holding a connection and nothing else), and at
// each step the host's memory and the rate and p99 of 16 callers of the
// Go echo; then active clients, each one caller with a request in flight.
func scaleClients(t *testing.T) string {
	var b strings.Builder
	maxClients := min(10000, fdRoom(t)/2-200) // this process holds each client's socket, and so does the host
	h := startHost(t, echoPlugins(t), t.TempDir(), "--broker-max-clients", strconv.Itoa(maxClients+2000))
	broker := &url.URL{Scheme: "mqtt", Host: h.addr}
	b.WriteString("### The embedded broker's clients\n\n" +
		"| idle clients | RSS MiB | RSS per idle client KiB | req/s (W=16) | p99 ms | load |\n|---|---|---|---|---|---|\n")
	idle := newIdleClients(broker)
	defer idle.close()
	base := h.rssNow()
	for _, n := range []int{0, 100, 1000, 3000, 10000} {
		if n > maxClients { // the last step: as many as the file descriptors allow
			fmt.Fprintf(io.MultiWriter(&b, os.Stdout), "(%d file descriptors: %d idle clients, not %d)\n\n", fdRoom(t), maxClients, n)
			n = maxClients
		}
		if err := idle.grow(n); err != nil {
			t.Fatalf("%d idle clients: %v", n, err)
		}
		rss := h.rssNow()
		per := "-"
		if n > 0 {
			per = fmt.Sprintf("%.1f", float64(rss-base)/float64(n)/1024)
		}
		res := runLoad(t, loadgen.Config{Broker: broker, Topic: "rpc/cli-host/echo", Payload: []byte("x"), Requests: 4000, Warmup: 400, InFlight: 16})
		fmt.Fprintf(io.MultiWriter(&b, os.Stdout), "| %d | %.1f | %s | %.0f | %.2f | %s |\n", n, mibOf(rss), per, res.Rate(), ms(res.P99), loadAvg())
	}
	idle.close()
	// The host answers 503 past 1,024 requests pending (rpc's bound), so
	// that the active clients stop at 500.
	b.WriteString("\n| active clients (1 request in flight each) | peak RSS MiB | req/s | p50 ms | p99 ms | load |\n|---|---|---|---|---|---|\n")
	for _, w := range []int{16, 100, 500} {
		if w > maxClients {
			break
		}
		peak := h.sampleRSS()
		res := runLoad(t, loadgen.Config{Broker: broker, Topic: "rpc/cli-host/echo", Payload: []byte("x"), Requests: max(4000, 4*w),
			Warmup: w, InFlight: w, Expiry: 30 * time.Second})
		fmt.Fprintf(io.MultiWriter(&b, os.Stdout), "| %d | %.1f | %.0f | %.2f | %.2f | %s |\n", w, mibOf(peak()), res.Rate(), ms(res.P50), ms(res.P99), loadAvg())
	}
	h.stop()
	b.WriteString("\n")
	return b.String()
}

// scalePayload is the third curve: 16 callers of the Go echo with
// payloads from 1 KiB to 4 MiB.
func scalePayload(t *testing.T) string {
	var b strings.Builder
	h := startHost(t, echoPlugins(t), t.TempDir(), "--max-response-bytes", strconv.Itoa(8<<20), "--max-request-bytes", strconv.Itoa(16<<20))
	defer h.stop()
	broker := &url.URL{Scheme: "mqtt", Host: h.addr}
	b.WriteString("### Payload size (Go echo, 16 in flight)\n\n| payload | req/s | MiB/s each way | p50 ms | p99 ms | peak RSS MiB | load |\n|---|---|---|---|---|---|---|\n")
	sizes := []int{1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20}
	if v := os.Getenv("CMDHOST_BENCH_SCALE_PAYLOAD"); v != "" { // one size, in bytes: to look into a limit
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("CMDHOST_BENCH_SCALE_PAYLOAD=%q: want a size in bytes", v)
		}
		sizes = []int{n}
	}
	for _, size := range sizes {
		n := min(4000, max(64, (256<<20)/size))
		peak := h.sampleRSS()
		res, err := loadgen.Run(context.Background(), loadgen.Config{Broker: broker, Topic: "rpc/cli-host/echo", Payload: make([]byte, size),
			Requests: n, Warmup: n / 10, InFlight: 16, Expiry: 30 * time.Second})
		w := io.MultiWriter(&b, os.Stdout)
		if err != nil { // a limit found: said in the table, and the larger sizes not tried
			t.Logf("payload %s failed; the host's last lines:\n%s", sizeName(size), h.lastLines())
			fmt.Fprintf(w, "| %s | failed: %s |  |  |  | %.1f | %s |\n", sizeName(size), strings.SplitN(err.Error(), "\n", 2)[0], mibOf(peak()), loadAvg())
			break
		}
		fmt.Fprintf(w, "| %s | %.0f | %.1f | %.2f | %.2f | %.1f | %s |\n", sizeName(size), res.Rate(), res.Rate()*float64(size)/(1<<20),
			ms(res.P50), ms(res.P99), mibOf(peak()), loadAvg())
	}
	b.WriteString("\n")
	return b.String()
}

// scaleCommands is the fourth curve: a host serving 1,000 WAT echo
// plugins whose instances are released after a second idle, called at
// random among k of them: the more commands, the more calls find no
// instance and make one.
func scaleCommands(t *testing.T, wat []byte) string {
	var b strings.Builder
	dir := t.TempDir()
	names, err := fleet.Write(dir, wat, fleet.WATMarker, 1000, fleet.WATName)
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, dir, t.TempDir(), "--idle-timeout", "1s")
	defer h.stop()
	broker := &url.URL{Scheme: "mqtt", Host: h.addr}
	b.WriteString("### Commands called at random among 1,000 plugins (WAT echo, idle timeout 1 s, 16 in flight)\n\n" +
		"| commands | req/s | p50 ms | p99 ms | host CPU ms per request | load |\n|---|---|---|---|---|---|\n")
	for _, k := range []int{1, 10, 100, 1000} {
		topics := make([]string, k)
		for i := range topics {
			topics[i] = "rpc/cli-host/" + names[i*len(names)/k]
		}
		cpu := h.cpuNow()
		res := runLoad(t, loadgen.Config{Broker: broker, Topics: topics, Payload: []byte("x"), Requests: 4000, Warmup: 0, InFlight: 16})
		used := h.cpuNow() - cpu
		fmt.Fprintf(io.MultiWriter(&b, os.Stdout), "| %d | %.0f | %.2f | %.2f | %.3f | %s |\n", k, res.Rate(), ms(res.P50), ms(res.P99),
			float64(used.Microseconds())/1000/float64(res.Requests), loadAvg())
	}
	b.WriteString("\n")
	return b.String()
}

func runLoad(t *testing.T, cfg loadgen.Config) loadgen.Result {
	t.Helper()
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("load on %s%v, %d B, W=%d: %v", cfg.Topic, len(cfg.Topics), len(cfg.Payload), cfg.InFlight, err)
	}
	return res
}

// echoPlugins is a plugins folder with the Go echo.
func echoPlugins(t *testing.T) string {
	dir := t.TempDir()
	bin, err := os.ReadFile("../../../../testdata/plugins/echo.wasm")
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildGoEcho builds testdata/bench-goecho with its command named
// fleet.GoMarker.
func buildGoEcho(t *testing.T) []byte {
	out := filepath.Join(t.TempDir(), "goecho.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-ldflags=-X main.command="+fleet.GoMarker, "-o", out, "../../../../testdata/bench-goecho")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go guest: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// scaleHost is a cmdhost serve process under measure.
type scaleHost struct {
	t        *testing.T
	cmd      *exec.Cmd
	addr     string
	ready    time.Duration // from its start to its serving line
	cpu      time.Duration // its CPU time (user and system) then
	rss      int64         // its resident set then, in bytes
	compiled int           // modules its start compiled: files it added to the compilation cache
	done     chan struct{}
	stopped  bool
	logMu    sync.Mutex
	log      []string // its last lines of log
}

// lastLines are the host's last lines of log, for a failure's message.
func (h *scaleHost) lastLines() string {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	return strings.Join(h.log, "\n")
}

// startHost starts serve on dir's plugins with the compilation cache in
// cache and waits for its serving line.
func startHost(t *testing.T, dir, cache string, extra ...string) *scaleHost {
	t.Helper()
	before := countFiles(cache)
	h := &scaleHost{t: t, addr: clitest.FreeAddr(t), done: make(chan struct{})}
	args := append([]string{"--cache-dir", cache, "serve", "--plugins", dir, "--listen", h.addr, "--id", "cli-host",
		"--state-dir", t.TempDir()}, extra...)
	h.cmd = exec.Command(clitest.Binary, args...)
	stderr, err := h.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	serving := make(chan struct{})
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "msg=serving") && serving != nil {
				close(serving)
				serving = nil
			}
			h.logMu.Lock()
			h.log = append(h.log, sc.Text())
			if len(h.log) > 40 {
				h.log = h.log[1:]
			}
			h.logMu.Unlock()
		}
	}()
	select {
	case <-serving:
	case <-h.done:
		t.Fatalf("serve %v exited:\n%s", args, h.lastLines())
	case <-time.After(10 * time.Minute):
		t.Fatalf("serve %v did not start within 10 minutes", args)
	}
	h.ready = time.Since(start)
	h.cpu, h.rss = h.cpuNow(), h.rssNow()
	h.compiled = countFiles(cache) - before
	return h
}

func (h *scaleHost) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	<-h.done
	_ = h.cmd.Wait()
}

// cpuNow is the process's CPU time, user and system, from /proc.
func (h *scaleHost) cpuNow() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", h.cmd.Process.Pid))
	if err != nil {
		h.t.Fatalf("reading the host's CPU time: %v; its last lines:\n%s", err, h.lastLines())
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:])) // fields from the third on
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// rssNow is the process's resident set in bytes, from /proc.
func (h *scaleHost) rssNow() int64 {
	rss, err := h.readRSS()
	if err != nil {
		h.t.Fatalf("%v; its last lines:\n%s", err, h.lastLines())
	}
	return rss
}

func (h *scaleHost) readRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the host's memory: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status: the host exited")
}

// sampleRSS samples the resident set every 20 ms until the returned
// function is called, which returns the largest seen (a failed read,
// the host gone, counts as none: the test's goroutine reports it).
func (h *scaleHost) sampleRSS() func() int64 {
	quit, result := make(chan struct{}), make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, _ := h.readRSS()
			peak = max(peak, rss)
			select {
			case <-tick.C:
			case <-quit:
				result <- peak
				return
			}
		}
	}()
	return func() int64 { close(quit); return max(<-result, h.rssNow()) }
}

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// fdRoom is how many file descriptors this process may open: its soft
// RLIMIT_NOFILE (which the Go runtime raised to the hard limit at start;
// a child gets the same).
func fdRoom(t *testing.T) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return int(min(rl.Cur, 1<<20))
}

func mibOf(b int64) float64 { return float64(b) / (1 << 20) }

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// idleClients are MQTT v5 clients of a broker that connect and then hold
// their connection, doing nothing else (keep alive 0: no pings): the
// broker's cost of a client that is merely there.
type idleClients struct {
	broker *url.URL
	conns  []net.Conn
}

func newIdleClients(broker *url.URL) *idleClients { return &idleClients{broker: broker} }

// grow connects clients, one after another, until n are connected.
func (c *idleClients) grow(n int) error {
	for len(c.conns) < n {
		conn, err := net.Dial("tcp", c.broker.Host)
		if err != nil {
			return err
		}
		c.conns = append(c.conns, conn)
		id := fmt.Sprintf("idle-%06d", len(c.conns))
		// CONNECT: protocol name, version 5, clean start, keep alive 0, no
		// properties, the client id.
		body := append([]byte{0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 0, 0, 0, byte(len(id))}, id...)
		if _, err := conn.Write(append([]byte{0x10, byte(len(body))}, body...)); err != nil {
			return err
		}
		var ack [4]byte // CONNACK: type, length, flags, reason code (then its properties)
		if _, err := io.ReadFull(conn, ack[:]); err != nil {
			return fmt.Errorf("client %s: reading its CONNACK: %w", id, err)
		}
		if ack[0] != 0x20 || ack[3] != 0 {
			return fmt.Errorf("client %s: CONNACK % x: refused", id, ack)
		}
		rest := make([]byte, int(ack[1])-2)
		if _, err := io.ReadFull(conn, rest); err != nil {
			return fmt.Errorf("client %s: reading its CONNACK: %w", id, err)
		}
	}
	return nil
}

func (c *idleClients) close() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
}
