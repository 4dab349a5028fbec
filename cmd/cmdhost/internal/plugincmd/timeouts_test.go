package plugincmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/servecmd"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// pluginsFolder makes a plugins folder with copies of the test plugins
// named and the operator files given (plugin name → content).
func pluginsFolder(t *testing.T, modules []string, operators map[string]string) string {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	for _, m := range modules {
		bin, err := os.ReadFile(filepath.Join(clitest.Plugins, m))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(m)), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range operators {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExecTimeoutFlagLikeServe: inspect's and list's --exec-timeout has
// serve's name, default and variable, so they show what serve would use.
func TestExecTimeoutFlagLikeServe(t *testing.T) {
	var serve *cli.DurationFlag
	for _, f := range servecmd.ServeCommand().Flags {
		if d, ok := f.(*cli.DurationFlag); ok && d.Name == "exec-timeout" {
			serve = d
		}
	}
	mine := execTimeoutFlag().(*cli.DurationFlag)
	if serve == nil || serve.Value != mine.Value || !reflect.DeepEqual(serve.EnvVars, mine.EnvVars) {
		t.Fatalf("serve's --exec-timeout %+v, inspect's and list's %+v", serve, mine)
	}
	for _, sub := range PluginCommand().Subcommands {
		if sub.Name != "inspect" && sub.Name != "list" {
			continue
		}
		found := false
		for _, f := range sub.Flags {
			found = found || f.Names()[0] == "exec-timeout"
		}
		if !found {
			t.Errorf("plugin %s has no --exec-timeout", sub.Name)
		}
	}
}

// TestInspectTimeouts: inspect shows each command's effective timeout
// with its source and its on_timeout policy, reading the operator file
// beside the module and serve's --exec-timeout (flag or variable).
func TestInspectTimeouts(t *testing.T) {
	bare := pluginsFolder(t, []string{"probe.wasm"}, nil)
	withOp := pluginsFolder(t, []string{"probe.wasm"}, map[string]string{
		"probe": `{"timeout": "2s", "commands": {"probe-idem": {"timeout": "500ms", "onTimeout": "retry", "retries": 2}}}`,
	})
	cases := []struct {
		name string
		dir  string
		env  []string
		args []string
		want []string // lines' starts, spaces squeezed
	}{
		{"no operator file", bare, nil, nil, []string{
			"operator: none",
			"probe-request false - 3s (module) fail",
			"probe-status false - 10s (host default) fail",
			"probe-idem true 1h0m0s 10s (host default) fail",
		}},
		{"--exec-timeout", bare, nil, []string{"--exec-timeout", "4s"}, []string{
			"probe-request false - 3s (module) fail",
			"probe-status false - 4s (host default) fail",
		}},
		{"CMDHOST_EXEC_TIMEOUT", bare, []string{"CMDHOST_EXEC_TIMEOUT=7s"}, nil, []string{
			"probe-status false - 7s (host default) fail",
		}},
		{"no host default", bare, nil, []string{"--exec-timeout", "0s"}, []string{
			"probe-status false - none (host default) fail",
		}},
		{"operator file", withOp, nil, nil, []string{
			"operator: " + filepath.Join(withOp, "probe.json"),
			"probe-request false - 2s (operator plugin) fail",
			"probe-status false - 2s (operator plugin) fail",
			"probe-idem true 1h0m0s 500ms (operator command) retry ×2",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"plugin", "inspect", filepath.Join(c.dir, "probe.wasm")}, c.args...)
			out, errOut, code := clitest.RunEnv(t, c.env, args...)
			if code != 0 {
				t.Fatalf("status %d: %s", code, errOut)
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				lines[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, w := range c.want {
				found := false
				for l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("no line starts with %q:\n%s", w, out)
				}
			}
		})
	}

	// --json: the declared timeout stays "timeout"; the effective one,
	// its source and the policy come beside it.
	out, errOut, code := clitest.Run(t, "plugin", "inspect", "--json", "--exec-timeout", "5s", filepath.Join(withOp, "probe.wasm"))
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	want := map[string]commandView{}
	for _, c := range in.Commands {
		want[c.Name] = c
	}
	if c := want["probe-request"]; c.Timeout != "3s" || c.TimeoutView != (admin.TimeoutView{EffectiveTimeout: "2s", TimeoutSource: "operator plugin", OnTimeout: "fail"}) {
		t.Errorf("probe-request: %+v", c)
	}
	if c := want["probe-idem"]; c.TimeoutView != (admin.TimeoutView{EffectiveTimeout: "500ms", TimeoutSource: "operator command", OnTimeout: "retry", Retries: 2}) {
		t.Errorf("probe-idem: %+v", c)
	}
	if in.Operator != filepath.Join(withOp, "probe.json") {
		t.Errorf("operator %q", in.Operator)
	}
}

// TestInspectOnTimeout: a retry policy is shown for counter-idem
// (idempotent) and refused for counter (not), as serve would; so is an
// invalid operator file.
func TestInspectOnTimeout(t *testing.T) {
	dir := pluginsFolder(t, []string{"counter.wasm", "counter-idem.wasm"}, map[string]string{
		"counter":      `{"commands": {"counter": {"onTimeout": "retry", "retries": 1}}}`,
		"counter-idem": `{"onTimeout": "retry", "retries": 3}`,
	})
	out, errOut, code := clitest.Run(t, "plugin", "inspect", filepath.Join(dir, "counter-idem.wasm"))
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "counter-idem true 1h0m0s 10s (host default) retry ×3") {
		t.Errorf("status %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	out, errOut, code = clitest.Run(t, "plugin", "inspect", filepath.Join(dir, "counter.wasm"))
	want := `cmdhost: operator file: counter.json: "commands.counter.onTimeout": "retry" needs an idempotent command, and the module does not declare counter idempotent`
	if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "(the host would not serve the plugin)") {
		t.Errorf("status %d, stdout %q, stderr %q; want status 1 and %s", code, out, errOut, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "counter.json"), []byte(`{"onTimeout": "retry"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = clitest.Run(t, "plugin", "inspect", filepath.Join(dir, "counter.wasm"))
	if code != 1 || !strings.Contains(errOut, `counter.json: "onTimeout": "retry" needs "retries"`) {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
}

// TestListDir: `plugin list DIR` loads a folder as serve would and shows
// every command's effective timeout, its source and its policy; plugins
// serve would refuse are listed with their error, and exit status 1.
func TestListDir(t *testing.T) {
	dir := pluginsFolder(t, []string{"counter.wasm", "counter-idem.wasm", "probe.wasm", "echo.wasm", "../plugins-bad/bad-net.wasm"},
		map[string]string{
			"counter":      `{"onTimeout": "retry", "retries": 2}`,
			"counter-idem": `{"onTimeout": "retry", "retries": 2, "timeout": "750ms"}`,
			"probe":        `{"commands": {"probe-idem": {"timeout": "500ms", "onTimeout": "retry", "retries": 1}}}`,
			"echo":         `{"enabled": false}`,
		})
	out, errOut, code := clitest.RunEnv(t, []string{"CMDHOST_EXEC_TIMEOUT=6s"}, "plugin", "list", dir)
	rows := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, w := range []string{
		"PLUGIN IN A HOST COMMAND IDEMPOTENT TIMEOUT ON TIMEOUT",
		"bad-net refused - - - -",
		"counter refused - - - -",
		"counter-idem served counter-idem true 750ms (operator plugin) retry ×2",
		"echo disabled - - - -",
		"probe served probe-idem true 500ms (operator command) retry ×1",
		"probe served probe-request false 3s (module) fail",
		"probe served probe-status false 6s (host default) fail",
		`counter: plugin counter: counter.json: "onTimeout": "retry" applies to every command of the plugin, and the module does not declare counter idempotent (a retry would run its effects twice): remove "onTimeout" and "retries": the module declares no idempotent command`,
		"bad-net: loading plugin bad-net: imports wasi_snapshot_preview1.sock_accept: network access is never granted to plugins",
	} {
		if !rows[w] {
			t.Errorf("no row %q", w)
		}
	}
	// Offline, nothing is "serving" (issue 39): the first line says
	// what the folder holds.
	if !strings.HasPrefix(out, "plugins folder "+dir+", read offline (no host asked): 5 plugins, 2 a host would serve\n") || strings.Contains(out, "serving") {
		t.Errorf("the folder's summary, or a plugin said serving:\n%s", out)
	}
	if code != 1 || !strings.Contains(errOut, "2 of 5 plugins would not be served") {
		t.Errorf("status %d, stderr %q; want 1", code, errOut)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s", out)
	}

	out, errOut, code = clitest.Run(t, "plugin", "list", "--json", "--exec-timeout", "1m", dir)
	var got []folderPlugin
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("status %d, %v: %s %s", code, err, out, errOut)
	}
	byName := map[string]folderPlugin{}
	for _, p := range got {
		byName[p.Name] = p
	}
	if p := byName["counter"]; p.State != "failed" || !strings.Contains(p.Error, "does not declare counter idempotent") || p.Commands == nil || len(p.Commands) != 0 {
		t.Errorf("counter: %+v", p)
	}
	if p := byName["echo"]; p.State != "disabled" || p.Operator != filepath.Join(dir, "echo.json") {
		t.Errorf("echo: %+v", p)
	}
	p := byName["probe"]
	if p.State != "serving" || len(p.Commands) != 12 {
		t.Fatalf("probe: %+v", p)
	}
	for _, c := range p.Commands {
		want := admin.TimeoutView{EffectiveTimeout: "1m0s", TimeoutSource: "host default", OnTimeout: "fail"}
		switch c.Name {
		case "probe-idem":
			want = admin.TimeoutView{EffectiveTimeout: "500ms", TimeoutSource: "operator command", OnTimeout: "retry", Retries: 1}
		case "probe-request":
			want = admin.TimeoutView{EffectiveTimeout: "3s", TimeoutSource: "module", OnTimeout: "fail"}
		}
		if c.TimeoutView != want {
			t.Errorf("%s: %+v, want %+v", c.Name, c.TimeoutView, want)
		}
	}

	// A folder serve would serve whole: status 0.
	ok := pluginsFolder(t, []string{"counter-idem.wasm"}, nil)
	out, errOut, code = clitest.Run(t, "plugin", "list", ok)
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "counter-idem served counter-idem true 10s (host default) fail") {
		t.Errorf("status %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestListDirUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plugin", "list", "a", "b"}, "list takes at most one plugins folder"},
		{[]string{"plugin", "list", filepath.Join(clitest.Plugins, "echo.wasm")}, "echo.wasm: not a directory"},
		{[]string{"plugin", "list", "--exec-timeout", "-1s", clitest.Plugins}, "--exec-timeout must not be negative"},
	} {
		out, errOut, code := clitest.Run(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
}
