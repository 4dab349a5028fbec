package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freeAddr returns a 127.0.0.1 address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServe runs `cmdhost serve` with the embedded broker on a free port
// and returns once it logs that it serves; stop sends SIGTERM and returns
// the exit error and the log.
func startServe(t *testing.T, onLine func(string), extra ...string) (addr string, stop func() (error, string)) {
	t.Helper()
	return startServeIn(t, plugins, onLine, extra...)
}

// startServeIn is startServe on another plugins folder.
func startServeIn(t *testing.T, dir string, onLine func(string), extra ...string) (addr string, stop func() (error, string)) {
	t.Helper()
	addr, _, stop = launchServe(t, dir, onLine, extra...)
	return addr, stop
}

// launchServe is startServeIn that also returns the process, for tests
// that kill it.
func launchServe(t *testing.T, dir string, onLine func(string), extra ...string) (addr string, cmd *exec.Cmd, stop func() (error, string)) {
	t.Helper()
	addr = freeAddr(t)
	args := append([]string{"--cache-dir", cliCache(), "serve", "--plugins", dir, "--listen", addr, "--id", "cli-host"}, extra...)
	cmd = exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	serving := make(chan struct{})
	var servingOnce sync.Once // serve logs "serving" again after each reload
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if onLine != nil {
				onLine(sc.Text())
			}
			if strings.Contains(sc.Text(), `msg=serving`) {
				servingOnce.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
	case <-done:
		t.Fatalf("serve exited: %s", log.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not start: %s", log.String())
	}
	stopped := false
	stop = func() (error, string) {
		if stopped {
			return nil, ""
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		return cmd.Wait(), log.String()
	}
	t.Cleanup(func() { stop() })
	return addr, cmd, stop
}

func TestServeAndInvoke(t *testing.T) {
	addr, stop := startServe(t, nil)
	broker := "mqtt://" + addr
	out, errOut, code := run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host")
	if out != "hi" || code != 0 {
		t.Fatalf("invoke echo: %q %q %d", out, errOut, code)
	}
	out, errOut, code = run(t, "invoke", "fail", "--broker", broker, "--executor", "cli-host")
	if code != 1 || out != "" || !strings.Contains(errOut, "status 500 (application error): fail plugin: deliberate failure") {
		t.Fatalf("invoke fail: %q %q %d", out, errOut, code)
	}
	out, errOut, code = run(t, "invoke", "nosuch", "--timeout", "1s", "--broker", broker, "--executor", "cli-host")
	if code != 1 || !strings.Contains(errOut, "no response before the timeout") {
		t.Fatalf("invoke nosuch: %q %q %d", out, errOut, code)
	}
	// A command nobody serves is never acked: invoke fails fast, whatever
	// its timeout.
	out, errOut, code = run(t, "invoke", "nosuch", "--timeout", "1m", "--broker", broker, "--executor", "cli-host")
	if code != 1 || !strings.Contains(errOut, "no executor answered") {
		t.Fatalf("invoke nosuch --timeout 1m: %q %q %d", out, errOut, code)
	}
	err, log := stop()
	if err != nil {
		t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, log)
	}
	for _, want := range []string{"embedded broker listening", "plugin loaded", "stopping: finishing requests in flight", "msg=stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
}

// A request in flight at SIGTERM is still answered.
func TestServeDrainsOnStop(t *testing.T) {
	received := make(chan struct{})
	var once sync.Once
	addr, stop := startServe(t, func(line string) {
		if strings.Contains(line, "request received") {
			once.Do(func() { close(received) })
		}
	}, "--log-level", "debug")
	res := make(chan string, 1)
	go func() {
		out, errOut, _ := run(t, "invoke", "sleep", "-d", "1500", "--broker", "mqtt://"+addr, "--executor", "cli-host")
		res <- out + errOut
	}()
	<-received // the request is in the host: stop now
	err, log := stop()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	if got := <-res; got != "1500" {
		t.Fatalf("the request in flight at stop got %q; serve's log:\n%s", got, log)
	}
}

func TestServePortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, errOut, code := run(t, "serve", "--plugins", plugins, "--listen", l.Addr().String())
	want := fmt.Sprintf("--broker mqtt://%s", l.Addr())
	if code == 0 || !strings.Contains(errOut, "address already in use") || !strings.Contains(errOut, want) {
		t.Fatalf("status %d, stderr %q; want an error naming %q", code, errOut, want)
	}
}

func TestServeBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--plugins", "/nonexistent"}, "--plugins /nonexistent: not a directory"},
		{[]string{"serve", "--plugins", plugins, "--broker", "localhost:1883"}, "want a URL such as mqtt://127.0.0.1:1883"},
		{[]string{"serve", "--plugins", plugins, "--pool", "0"}, "--pool must be positive"},
		{[]string{"serve", "--plugins", plugins, "--max-expiry", "500ms"}, "--max-expiry must be at least 1s"},
		{[]string{"serve", "--plugins", plugins, "--session-expiry", "-1s"}, "--session-expiry must be between 0 and 136 years"},
		{[]string{"serve", "--plugins", plugins, "--log-level", "loud"}, "--log-level"},
		{[]string{"serve"}, `Required flag "plugins" not set`},
		{[]string{"invoke"}, "invoke needs one command name"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want it to name %q", c.args, code, errOut, c.want)
		}
	}
}

// installFile writes a module into dir the way an installer should: a
// temp file renamed into place.
func installFile(t *testing.T, from, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// untilAnswer invokes until the reply is want or the deadline passes, and
// returns how long that took.
func untilAnswer(t *testing.T, broker, command, want string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		// Plain requests: a resend of an ask could reach the command as it
		// comes up and run it (counter counts) for an invoke that then
		// times out.
		out, errOut, _ := run(t, "invoke", command, "-d", "hi", "--timeout", "300ms", "--no-ack", "--broker", broker, "--executor", "cli-host")
		if out == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s never answered %q within %v: last %q %q", command, want, limit, out, errOut)
		}
	}
}

// Hot reload: a module copied into the folder of a running
// host is served without a restart; replacing it brings the new behaviour.
func TestServeHotReload(t *testing.T) {
	dir := t.TempDir()
	installFile(t, filepath.Join(plugins, "echo.wasm"), dir, "echo.wasm")
	addr, _ := startServeIn(t, dir, nil)
	broker := "mqtt://" + addr
	untilAnswer(t, broker, "echo", "hi", 10*time.Second)

	installFile(t, filepath.Join(plugins, "counter.wasm"), dir, "counter.wasm")
	took := untilAnswer(t, broker, "counter", "hi:1", 10*time.Second)
	t.Logf("a new module was served %v after it was copied in", took.Round(time.Millisecond))

	installFile(t, filepath.Join(plugins, "../plugins-alt/echo-v2.wasm"), dir, "echo.wasm")
	took = untilAnswer(t, broker, "echo", "v2:hi", 10*time.Second)
	t.Logf("the replaced module answered %v after the replacement", took.Round(time.Millisecond))
}

// The plugin subcommands against a running host: list shows what serves,
// install adds a module, reload and remove need the admin token.
func TestPluginAdmin(t *testing.T) {
	dir := t.TempDir()
	installFile(t, filepath.Join(plugins, "echo.wasm"), dir, "echo.wasm")
	addr, _ := startServeIn(t, dir, nil, "--admin-token", "s3cret")
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	untilAnswer(t, "mqtt://"+addr, "echo", "hi", 10*time.Second)

	out, errOut, code := run(t, append([]string{"plugin", "list"}, host...)...)
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "echo") || !strings.Contains(out, "serving") {
		t.Fatalf("plugin list: %q %q %d", out, errOut, code)
	}
	_, errOut, code = run(t, append([]string{"plugin", "reload", "echo"}, host...)...)
	if code != 1 || !strings.Contains(errOut, "status 403") || !strings.Contains(errOut, "admin token") {
		t.Fatalf("reload without the token: %q %d", errOut, code)
	}
	out, errOut, code = run(t, "plugin", "install", filepath.Join(plugins, "counter.wasm"), "--plugins", dir)
	if code != 0 || !strings.Contains(out, "installed") {
		t.Fatalf("install: %q %q %d", out, errOut, code)
	}
	untilAnswer(t, "mqtt://"+addr, "counter", "hi:1", 10*time.Second)
	_, errOut, code = run(t, "plugin", "install", filepath.Join(plugins, "../plugins-bad/bad-net.wasm"), "--plugins", dir)
	if code != 1 || !strings.Contains(errOut, "not installed") {
		t.Fatalf("installing a bad module: %q %d", errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad-net.wasm")); err == nil {
		t.Fatal("a refused module must not reach the folder")
	}
	out, errOut, code = run(t, append([]string{"plugin", "reload", "echo", "--token", "s3cret"}, host...)...)
	if code != 0 || !strings.Contains(out, "echo: reload done") {
		t.Fatalf("reload: %q %q %d", out, errOut, code)
	}
	out, errOut, code = run(t, append([]string{"plugin", "list", "--json"}, host...)...)
	var views []struct {
		Name    string
		Reloads int
		Calls   int64
	}
	if code != 0 || json.Unmarshal([]byte(out), &views) != nil || len(views) != 2 || views[1].Name != "echo" || views[1].Reloads != 1 {
		t.Fatalf("plugin list --json after the reload: %q %q %d", out, errOut, code)
	}
	checkJSONShape(t, "plugin list --json (a host)", out)
	out, errOut, code = run(t, append([]string{"plugin", "remove", "counter", "--token", "s3cret"}, host...)...)
	if code != 0 {
		t.Fatalf("remove: %q %q %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "counter.wasm")); !os.IsNotExist(err) {
		t.Fatalf("remove deletes the file: %v", err)
	}
	if out, _, _ := run(t, "invoke", "counter", "--timeout", "1s", "--broker", "mqtt://"+addr, "--executor", "cli-host"); out != "" {
		t.Fatalf("a removed plugin answered %q", out)
	}
}
