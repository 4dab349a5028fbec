package servecmd

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clientcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

func TestServeAndInvoke(t *testing.T) {
	addr, stop := clitest.StartServe(t, nil)
	broker := "mqtt://" + addr
	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host")
	if out != "hi" || code != 0 {
		t.Fatalf("invoke echo: %q %q %d", out, errOut, code)
	}
	// Each kind of failure has its exit status (client.go), and its words.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fail"}, base.ExitFailed, "status 500 (application error): fail plugin: deliberate failure"},
		// A command the host does not serve is never acked: invoke fails
		// fast, whatever its timeout, and the host's admin list tells it
		// from a host that is not there.
		{[]string{"nosuch", "--timeout", "1m"}, base.ExitNoCommand, `host cli-host serves no command "nosuch"; it serves: `},
		{[]string{"nosuch", "--timeout", "1s"}, base.ExitNoCommand, `serves no command "nosuch"`},
		{[]string{"echo", "--executor", "nobody"}, base.ExitNoExecutor, "is `cmdhost serve` running with --id nobody on " + broker},
		{[]string{"--topic", "rpc/nobody/echo"}, base.ExitNoExecutor, "is an executor serving that topic on " + broker},
		{[]string{"sleep", "-d", "60000", "--timeout", "1s"}, base.ExitTimeout, "no reply within --timeout 1s: the executor acknowledged the request"},
		{[]string{"--topic", "rpc/cli-host/+"}, base.ExitUsage, "no wildcards"},
		{[]string{"echo", "--topic", "rpc/cli-host/echo"}, base.ExitUsage, "not both"},
		{[]string{"echo", "--broker", "mqtt://" + clitest.FreeAddr(t)}, base.ExitNoBroker, "connection refused"},
	} {
		// A flag given twice takes its last value (--executor): the
		// case's own win; a case's --broker replaces the host's (given
		// twice, --broker names two brokers to try in turn).
		args := []string{"invoke", "--executor", "cli-host"}
		if !slices.Contains(c.args, "--broker") {
			args = append(args, "--broker", broker)
		}
		args = append(args, c.args...)
		out, errOut, code := clitest.Run(t, args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stdout %q, stderr %q, exit %d; want exit %d and %q", c.args, out, errOut, code, c.code, c.want)
		}
	}
	out, errOut, code = clitest.Run(t, "invoke", "--topic", "rpc/cli-host/echo", "-d", "by topic", "--broker", broker)
	if out != "by topic" || code != 0 {
		t.Fatalf("invoke --topic: %q %q %d", out, errOut, code)
	}
	checkInvokeOutputs(t, broker)
	log, err := stop()
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
	addr, stop := clitest.StartServe(t, func(line string) {
		if strings.Contains(line, "request received") {
			once.Do(func() { close(received) })
		}
	}, "--log-level", "debug")
	res := make(chan string, 1)
	go func() {
		out, errOut, _ := clitest.Run(t, "invoke", "sleep", "-d", "1500", "--broker", "mqtt://"+addr, "--executor", "cli-host")
		res <- out + errOut
	}()
	<-received // the request is in the host: stop now
	log, err := stop()
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
	_, errOut, code := clitest.Run(t, "serve", "--plugins", clitest.Plugins, "--listen", l.Addr().String())
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
		{[]string{"serve", "--plugins", "/nonexistent"}, "--plugins /nonexistent: no such folder: create it with mkdir -p /nonexistent"},
		{[]string{"serve", "--plugins", "serve_test.go"}, "--plugins serve_test.go: not a directory: give the folder that holds the NAME.wasm files"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--broker", "localhost:1883"}, "want a URL such as mqtt://127.0.0.1:1883"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--pool", "0"}, "--pool must be positive"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--max-expiry", "500ms"}, "--max-expiry must be at least 1s"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--session-expiry", "-1s"}, "--session-expiry must be between 0 and 136 years"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--state-protocol", "maybe"}, `--state-protocol "maybe": give on or off`},
		{[]string{"serve", "--plugins", clitest.Plugins, "--state", "disk"}, `--state "disk": give aio`},
		{[]string{"serve", "--plugins", clitest.Plugins, "--state", "aio"}, "this host runs its embedded broker, whose state store is this host's own: name the Azure IoT Operations broker with --broker"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--state", "aio", "--broker", "mqtt://127.0.0.1:1", "--store", "redis://127.0.0.1:1"}, "--state aio and --store"},
		{[]string{"serve", "--plugins", clitest.Plugins, "--state", "aio", "--broker", "mqtt://127.0.0.1:1", "--state-dir", "off"}, "give a --state-dir, not off"},
		{[]string{"serve"}, "--plugins DIR is required"},
		{[]string{"invoke"}, "invoke needs a command name"},
	}
	for _, c := range cases {
		_, errOut, code := clitest.Run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want it to name %q", c.args, code, errOut, c.want)
		}
	}
}

// Hot reload: a module copied into the folder of a running
// host is served without a restart; replacing it brings the new behaviour.
func TestServeHotReload(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	addr, _ := clitest.StartServeIn(t, dir, nil)
	broker := "mqtt://" + addr
	clitest.UntilAnswer(t, broker, "echo", "hi", 10*time.Second)

	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "counter.wasm"), dir, "counter.wasm")
	took := clitest.UntilAnswer(t, broker, "counter", "hi:1", 10*time.Second)
	t.Logf("a new module was served %v after it was copied in", took.Round(time.Millisecond))

	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "../plugins-alt/echo-v2.wasm"), dir, "echo.wasm")
	took = clitest.UntilAnswer(t, broker, "echo", "v2:hi", 10*time.Second)
	t.Logf("the replaced module answered %v after the replacement", took.Round(time.Millisecond))
}

// The plugin subcommands against a running host: list shows what serves,
// install adds a module, reload and remove need the admin token.
func TestPluginAdmin(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "fail.wasm"), dir, "fail.wasm")
	addr, _ := clitest.StartServeIn(t, dir, nil, "--admin-token", "s3cret")
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	clitest.UntilAnswer(t, "mqtt://"+addr, "echo", "hi", 10*time.Second)

	// A plugin never called shows no latency; an error status counts as
	// an error.
	listRow := func(name string) []string {
		t.Helper()
		out, errOut, code := clitest.Run(t, append([]string{"plugin", "list"}, host...)...)
		if code != 0 || !strings.HasPrefix(out, "NAME ") {
			t.Fatalf("plugin list: %q %q %d", out, errOut, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == name {
				return f
			}
		}
		t.Fatalf("plugin list has no row %s: %q", name, out)
		return nil
	}
	// NAME STATE DIGEST COMMANDS INSTANCES CALLS ERRORS P50 P99 FUEL/CALL RELOADS LAST ERROR
	if row := listRow("fail"); row[1] != "serving" || row[5] != "0" || row[6] != "0" || row[7] != "-" || row[8] != "-" {
		t.Fatalf("fail, never called: %q", row)
	}
	if _, _, code := clitest.Run(t, append([]string{"invoke", "fail"}, host...)...); code != base.ExitFailed {
		t.Fatalf("invoke fail: exit %d", code)
	}
	if row := listRow("fail"); row[5] != "1" || row[6] != "1" || !strings.HasSuffix(row[7], "ms") {
		t.Fatalf("fail, called once: %q", row)
	}
	if row := listRow("echo"); row[5] != "1" || row[6] != "0" {
		t.Fatalf("echo, answered once: %q", row)
	}
	_, errOut, code := clitest.Run(t, append([]string{"plugin", "reload", "echo"}, host...)...)
	if code != 1 || !strings.Contains(errOut, "status 403") || !strings.Contains(errOut, "admin token") {
		t.Fatalf("reload without the token: %q %d", errOut, code)
	}
	out, errOut, code := clitest.Run(t, append([]string{"plugin", "install", filepath.Join(clitest.Plugins, "counter.wasm"), "--plugins", dir}, host...)...)
	if code != 0 || !strings.Contains(out, "installed") {
		t.Fatalf("install: %q %q %d", out, errOut, code)
	}
	clitest.UntilAnswer(t, "mqtt://"+addr, "counter", "hi:1", 10*time.Second)
	_, errOut, code = clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "../plugins-bad/bad-net.wasm"), "--plugins", dir)
	if code != 1 || !strings.Contains(errOut, "not installed") {
		t.Fatalf("installing a bad module: %q %d", errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad-net.wasm")); err == nil {
		t.Fatal("a refused module must not reach the folder")
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "reload", "echo", "--token", "s3cret"}, host...)...)
	if code != 0 || !strings.Contains(out, "echo: reload done") {
		t.Fatalf("reload: %q %q %d", out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "list", "--json"}, host...)...)
	var views []struct {
		Name         string
		Reloads      int
		Calls        int64
		ErrorReplies int64
	}
	if code != 0 || json.Unmarshal([]byte(out), &views) != nil || len(views) != 3 || views[1].Name != "echo" || views[1].Reloads != 1 ||
		views[2].Name != "fail" || views[2].ErrorReplies != 1 {
		t.Fatalf("plugin list --json after the reload: %q %q %d", out, errOut, code)
	}
	clitest.CheckJSONShape(t, "plugin list --json (a host)", out)
	out, errOut, code = clitest.Run(t, append([]string{"plugin", "remove", "counter", "--token", "s3cret"}, host...)...)
	if code != 0 {
		t.Fatalf("remove: %q %q %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "counter.wasm")); !os.IsNotExist(err) {
		t.Fatalf("remove deletes the file: %v", err)
	}
	if out, _, _ := clitest.Run(t, "invoke", "counter", "--timeout", "1s", "--broker", "mqtt://"+addr, "--executor", "cli-host"); out != "" {
		t.Fatalf("a removed plugin answered %q", out)
	}
}

// checkInvokeOutputs checks invoke's --json and -v, and the newline it
// adds after a payload on a terminal only.
func checkInvokeOutputs(t *testing.T, broker string) {
	notText := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(notText, []byte{0xff, 0x00, 'x'}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args              []string
		text, base64, ctt string
	}{
		{[]string{"-d", "hi", "--content-type", "text/x-greeting"}, "hi", "", "text/x-greeting"},
		{[]string{"-f", notText, "--content-type", "application/octet-stream"}, "", "/wB4", "application/octet-stream"},
	} {
		out, errOut, code := clitest.Run(t, append([]string{"invoke", "echo", "--json", "--broker", broker, "--executor", "cli-host"}, c.args...)...)
		var got clientcmd.InvokeReply
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("invoke --json %v: %q %q %d", c.args, out, errOut, code)
		}
		clitest.CheckJSONShape(t, "invoke --json", out)
		d, err := time.ParseDuration(got.Duration)
		if got.Status != 200 || got.Payload != c.text || got.PayloadBase64 != c.base64 || got.ContentType != c.ctt ||
			got.Topic != "rpc/cli-host/echo" || got.Sends < 1 || err != nil || d <= 0 || got.AckedAfter == "" || got.Timestamp == "" {
			t.Errorf("invoke --json %v: %s", c.args, out)
		}
	}
	// An error status is printed too, with exit status 1.
	out, errOut, code := clitest.Run(t, "invoke", "fail", "--json", "--broker", broker, "--executor", "cli-host")
	var got clientcmd.InvokeReply
	if code != base.ExitFailed || json.Unmarshal([]byte(out), &got) != nil || got.Status != 500 || !got.AppError || got.StatusMessage != "fail plugin: deliberate failure" {
		t.Errorf("invoke fail --json: %q %q, exit %d", out, errOut, code)
	}

	out, errOut, code = clitest.Run(t, "invoke", "echo", "-v", "-d", "hi", "--broker", broker, "--executor", "cli-host")
	for _, want := range []string{"→ rpc/cli-host/echo: 2 bytes, text/plain, expiry 15s", "acked after ", "← 200 after ", "timestamp: "} {
		if code != 0 || out != "hi" || !strings.Contains(errOut, want) {
			t.Errorf("invoke -v: stdout %q, stderr %q, exit %d; want %q on stderr", out, errOut, code, want)
		}
	}

	script, err := exec.LookPath("script") // util-linux: runs a command on a terminal
	if err != nil {
		t.Log("no script(1): the newline on a terminal is not checked")
		return
	}
	line := strings.Join([]string{clitest.Binary, "--cache-dir", clitest.CLICache(), "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host"}, " ")
	tty, err := exec.Command(script, "-qec", line, "/dev/null").Output()
	if err != nil || string(tty) != "hi\r\n" {
		t.Errorf("invoke on a terminal: %q, %v; want the payload and a newline", tty, err)
	}
}

// TestServingLine (issue 39): the line that says a host is ready is
// short: counts, not its topics (a folder of many plugins made it 2 KB),
// and the host's own ops are not counted among the commands.
func TestServingLine(t *testing.T) {
	var mu sync.Mutex
	var line string
	clitest.StartServeIn(t, t.TempDir(), func(l string) {
		if strings.Contains(l, "msg=serving") {
			mu.Lock()
			line = l
			mu.Unlock()
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(line, " commands=0 host_ops=") || strings.Contains(line, "topics=") || len(line) > 300 {
		t.Fatalf("serving line of an empty folder: %q (%d bytes)", line, len(line))
	}
}
