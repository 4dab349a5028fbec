package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// TestParseOperator: the documented example is read as such; every bad
// value is refused with the file, the field and the fix.
func TestParseOperator(t *testing.T) {
	data := t.TempDir()
	good := `{
  "enabled": true,
  "timeout": "2s",
  "onTimeout": "retry",
  "retries": 2,
  "commands": {"echo": {"timeout": "500ms", "onTimeout": "fail", "fuel": 0}},
  "concurrency": 4,
  "pool": 3,
  "memoryPages": 512,
  "idleTimeout": "5m",
  "grants": {"env": {"REGION": "eu"}, "mounts": [{"host": "` + data + `", "guest": "/data", "readOnly": true}]},
  "config": {"greeting": "hi"},
  "fuel": 1000000
}`
	op, err := ParseOperator("/p/echo.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	idle := 5 * time.Minute
	var noFuel int64
	want := &Operator{
		File: "/p/echo.json", Enabled: true, Timeout: 2 * time.Second, OnTimeout: &OnTimeout{Retries: 2},
		Commands:    map[string]CommandSettings{"echo": {Timeout: 500 * time.Millisecond, OnTimeout: &OnTimeout{}, Fuel: &noFuel}},
		Concurrency: 4, Pool: 3, MemoryPages: 512, IdleTimeout: &idle, Fuel: 1_000_000,
		Env:    map[string]string{"REGION": "eu"},
		Mounts: []wasm.Mount{{HostDir: data, GuestDir: "/data", ReadOnly: true}},
		Config: map[string]string{"greeting": "hi"},
	}
	if !reflect.DeepEqual(op, want) {
		t.Errorf("ParseOperator =\n%+v\nwant\n%+v", op, want)
	}
	if cfg := op.pluginConfig(wasm.PluginConfig{}); cfg.Fuel != 1_000_000 || cfg.CommandFuel["echo"] != wasm.NoBound {
		t.Errorf("fuel: plugin %d, commands %v; want 1000000 and none for echo", cfg.Fuel, cfg.CommandFuel)
	}
	echoTimeout, _ := op.execTimeout(abi.Command{Name: "echo"}, 0)
	otherTimeout, _ := op.execTimeout(abi.Command{Name: "other"}, 0)
	if echoTimeout != 500*time.Millisecond || otherTimeout != 2*time.Second || op.concurrency() != 4 ||
		op.onTimeoutOf("echo") != (OnTimeout{}) || op.onTimeoutOf("other") != (OnTimeout{Retries: 2}) {
		t.Errorf("timeout(echo) %v, timeout(other) %v, concurrency %d, onTimeout(echo) %v, onTimeout(other) %v",
			echoTimeout, otherTimeout, op.concurrency(), op.onTimeoutOf("echo"), op.onTimeoutOf("other"))
	}

	// Defaults: an empty object sets nothing; "idleTimeout": "0s" is
	// "never release", not "unset".
	op, err = ParseOperator("x.json", []byte(`{"idleTimeout": "0s", "grants": {"mounts": []}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !op.Enabled || op.IdleTimeout == nil || *op.IdleTimeout != 0 || op.Mounts == nil || len(op.Mounts) != 0 || op.concurrency() != 0 {
		t.Errorf("got %+v", op)
	}

	file := filepath.Join(data, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ content, want string }{
		{`{"timeout": "2 sec"}`, `echo.json: "timeout": "2 sec" is not a duration (e.g. "2s")`},
		{`{"timeout": 2}`, `echo.json: "timeout": is a number: write a duration string with a unit, e.g. "2s"`},
		{`{"timeout": "-1s"}`, `"timeout": "-1s" is negative`},
		{`{"timeout": "0s"}`, `"timeout": "0s" is zero`},
		{`{"idleTimeout": "5 minutes"}`, `"idleTimeout": "5 minutes" is not a duration`},
		{`{"timeut": "2s"}`, `echo.json: "timeut": unknown field: the fields here are "enabled", "timeout"`},
		{`{"Timeout": "2s"}`, `"Timeout": unknown field: did you mean "timeout"?`},
		{`{"pool": -1}`, `echo.json: "pool": -1 is out of range: write a whole number from 1 to`},
		{`{"pool": "4"}`, `"pool": is a string: write a whole number`},
		{`{"pool": 2.5}`, `"pool": 2.5 is not a whole number`},
		{`{"concurrency": 0}`, `"concurrency": 0 is out of range`},
		{`{"memoryPages": 70000}`, `"memoryPages": 70000 is out of range: write a whole number from 1 to 65536`},
		{`{"fuel": 0}`, `"fuel": 0 is out of range: write a whole number from 1 to 9007199254740992`},
		{`{"commands": {"echo": {"fuel": -1}}}`, `"commands.echo.fuel": -1 is out of range: write a whole number from 0 to`},
		{`{"enabled": "no"}`, `"enabled": is a string: write true or false`},
		{`{"pool": 1, "pool": 2}`, `"pool": is given twice`},
		{`{"timeout": null}`, `"timeout": is null`},
		{`{"enabled": true,}`, `echo.json: line 1, column 18: not valid JSON`},
		{"{\n  // off for now\n  \"enabled\": false\n}", `echo.json: line 2, column 3: not valid JSON`},
		{`{"enabled": true} {}`, `not valid JSON`},
		{``, `echo.json: is empty`},
		{`[]`, `echo.json: the file holds a list: write a JSON object`},
		{`{"commands": {"echo": {"timeout": "1s", "retry": 2}}}`, `"commands.echo.retry": unknown field: the fields here are "timeout", "onTimeout", "retries", "allow", "quota", "fuel"`},
		{`{"commands": {"echo": "1s"}}`, `"commands.echo": is a string: write an object`},
		{`{"commands": {"echo": {"timeout": "fast"}}}`, `"commands.echo.timeout": "fast" is not a duration`},
		{`{"config": {"k": 1}}`, `"config.k": is a number: write a string`},
		{`{"grants": {"env": {"A": "1"}, "mount": []}}`, `"grants.mount": unknown field: the fields here are "env", "mounts"`},
		{`{"grants": {"env": {"A=B": "1"}}}`, `"grants.env.A=B": is not an environment variable name`},
		{`{"grants": {"mounts": {"host": "/srv"}}}`, `"grants.mounts": is an object: write a list`},
		{`{"grants": {"mounts": [{"host": "/nonexistent/cmdhost", "guest": "/data"}]}}`, `echo.json: "grants.mounts[0].host": "/nonexistent/cmdhost" does not exist: create the directory or fix the path`},
		{`{"grants": {"mounts": [{"host": "data", "guest": "/data"}]}}`, `"grants.mounts[0].host": "data" is not an absolute path`},
		{`{"grants": {"mounts": [{"host": "` + file + `", "guest": "/data"}]}}`, `is not a directory`},
		{`{"grants": {"mounts": [{"host": "` + data + `", "guest": "data"}]}}`, `"grants.mounts[0].guest": "data" is not a clean absolute path`},
		{`{"grants": {"mounts": [{"host": "` + data + `"}]}}`, `"grants.mounts[0]": needs "host"`},
		{`{"grants": {"mounts": [{"host": "` + data + `", "guest": "/d"}, {"host": "` + data + `", "guest": "/d"}]}}`, `"grants.mounts[1].guest": "/d" is already mounted by grants.mounts[0]`},
		{`{"grants": {"mounts": [{"host": "` + data + `", "guest": "/d", "ro": true}]}}`, `"grants.mounts[0].ro": unknown field`},
	}
	for _, c := range bad {
		op, err := ParseOperator("/plugins/echo.json", []byte(c.content))
		if err == nil {
			t.Errorf("%s: accepted as %+v", c.content, op)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.content, err, c.want)
		}
	}
}

// writeOperator installs name's operator file.
func writeOperator(t *testing.T, dir, name, content string) {
	t.Helper()
	testkit.Install(t, dir, name+OperatorExt, []byte(content))
}

// servedAs returns what Commands says of command.
func servedAs(m *Manager, command string) (Command, bool) {
	return m.Command(command)
}

// TestOperatorSettings: the operator file's pool, config, env and mounts
// reach the plugin version; config and env add to the host's.
func TestOperatorSettings(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "hello.txt"), []byte("hello from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := readPlugin(t, "probe")
	testkit.Install(t, dir, "probe.wasm", probe)
	opFile := `{"pool": 2, "config": {"greeting": "hi"},
	  "grants": {"env": {"REGION": "eu"}, "mounts": [{"host": "` + data + `", "guest": "/data", "readOnly": true}]}}`
	writeOperator(t, dir, "probe", opFile)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	m.cfg.Plugin.Config = map[string]string{"greeting": "host", "site": "north"}
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}

	for _, c := range []struct{ command, payload, want string }{
		{"probe-config", "greeting", "hi"},   // the file wins
		{"probe-config", "site", "north"},    // the host's stays
		{"probe-env", "REGION", "true eu 1"}, // granted, and alone
		{"probe-file", "/data/hello.txt", "hello from the host"},
	} {
		resp, err := call(m, c.command, c.payload)
		if err != nil || resp.AppError || string(resp.Payload) != c.want {
			t.Errorf("%s %s = %v, %+v; want %q", c.command, c.payload, err, resp, c.want)
		}
	}

	s, _ := status(m, "probe")
	if s.State != StateServing || s.Operator != filepath.Join(dir, "probe.json") || s.OperatorDigest != digest([]byte(opFile)) || s.Digest != digest(probe) {
		t.Errorf("Status = %+v", s)
	}
	if sv, _ := servedAs(m, "probe-idem"); sv.Concurrency != 2 || sv.Timeout != 0 {
		t.Errorf("Served(probe-idem) = %+v, want concurrency 2 (the pool), timeout 0", sv)
	}

	// "pool": 2 bounds the instances: six calls at once run two by two.
	p, _ := m.Lookup("probe-idem")
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxInstances, maxInUse := int64(0), 0
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			st := p.Stats()
			mu.Lock()
			maxInstances, maxInUse = max(maxInstances, st.Instances), max(maxInUse, st.InUse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := call(m, "probe-idem", "150:"+string(rune('a'+i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	if maxInstances != 2 || maxInUse != 2 {
		t.Errorf("at most %d instances and %d calls in use, want 2 and 2 (pool 2)", maxInstances, maxInUse)
	}
}

// TestOperatorEnabled: "enabled": false keeps the plugin from being
// served and "enabled": true brings it back, by file changes under Watch;
// removing the operator file serves the plugin with the host's settings.
func TestOperatorEnabled(t *testing.T) {
	dir := t.TempDir()
	echo := readPlugin(t, "echo")
	testkit.Install(t, dir, "echo.wasm", echo)
	writeOperator(t, dir, "echo", `{"enabled": false}`)
	m, logs := newManager(t, dir, 50*time.Millisecond)
	changes := onChanges(m)
	watch(t, m)

	opPath := filepath.Join(dir, "echo.json")
	testkit.WaitFor(t, "echo to be disabled", func() bool {
		s, ok := status(m, "echo")
		return ok && s.State == StateDisabled
	})
	if s, _ := status(m, "echo"); s.Operator != opPath || s.Digest != "" || s.LastError != "" || s.Loads != 0 {
		t.Errorf("Status = %+v", s)
	}
	if _, ok := m.Lookup("echo"); ok {
		t.Fatal("a disabled plugin is served")
	}
	if err := m.Reload(context.Background(), "echo"); err == nil || !strings.Contains(err.Error(), `disabled by `+opPath) {
		t.Errorf("Reload of a disabled plugin: %v", err)
	}
	if err := m.Remove(context.Background(), "echo"); err == nil {
		t.Error("Remove of a disabled plugin succeeded")
	}

	writeOperator(t, dir, "echo", `{"enabled": true, "timeout": "1s"}`)
	testkit.WaitFor(t, "echo to be served", func() bool {
		_, ok := m.Lookup("echo")
		return ok
	})
	mustEcho(t, m, "echo")
	if sv, _ := servedAs(m, "echo"); sv.Timeout != time.Second {
		t.Errorf("Served = %+v, want timeout 1s", sv)
	}
	testkit.WaitFor(t, "OnChange", func() bool { return changes.get() == 1 })

	// Disabled while serving: the version drains and closes.
	writeOperator(t, dir, "echo", `{"enabled": false}`)
	testkit.WaitFor(t, "echo to be disabled again", func() bool {
		s, _ := status(m, "echo")
		_, served := m.Lookup("echo")
		return !served && s.State == StateDisabled && s.Draining == 0 && s.Instances == 0
	})
	testkit.WaitFor(t, "OnChange", func() bool { return changes.get() == 2 })
	if !logs.Contains("plugin disabled by its operator file") {
		t.Error("the log does not say the plugin was disabled")
	}

	// No operator file: the host's settings.
	if err := os.Remove(opPath); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "echo to be served with the host's settings", func() bool {
		sv, ok := servedAs(m, "echo")
		return ok && sv.Timeout == 0 && sv.TimeoutSource == TimeoutFromHost && sv.Concurrency == hostConcurrency
	})
	if s, _ := status(m, "echo"); s.State != StateServing || s.Operator != "" || s.OperatorDigest != "" || s.Loads != 2 {
		t.Errorf("Status = %+v", s)
	}
	mustEcho(t, m, "echo")
}

// TestOperatorInvalidKeepsServing: an invalid operator file is refused
// like an invalid module: the old version keeps serving with its old
// settings and the error shows in Status; a valid one then reloads.
func TestOperatorInvalidKeepsServing(t *testing.T) {
	dir := t.TempDir()
	echo := readPlugin(t, "echo")
	testkit.Install(t, dir, "echo.wasm", echo)
	good := `{"timeout": "1s", "pool": 1}`
	writeOperator(t, dir, "echo", good)
	m, logs := newManager(t, dir, 50*time.Millisecond)
	watch(t, m)
	testkit.WaitFor(t, "echo to be served", func() bool {
		_, ok := m.Lookup("echo")
		return ok
	})
	first, _ := m.Lookup("echo")

	for i, c := range []struct{ content, want string }{
		{`{"timeout": "1s",}`, `plugin echo: echo.json: line 1, column 18: not valid JSON`},
		{`{"timeout": "1s", "retries": 3}`, `plugin echo: echo.json: "retries": is set without "onTimeout": "retry"`},
		{`{"timeout": "2 sec"}`, `plugin echo: echo.json: "timeout": "2 sec" is not a duration (e.g. "2s")`},
		{`{"commands": {"nosuch": {"timeout": "1s"}}}`, `plugin echo: echo.json: "commands.nosuch": the module declares no command "nosuch" (it declares echo)`},
	} {
		writeOperator(t, dir, "echo", c.content)
		testkit.WaitFor(t, "the error in Status", func() bool {
			s, _ := status(m, "echo")
			return s.LoadFailures == i+1
		})
		s, _ := status(m, "echo")
		if !strings.Contains(s.LastError, c.want) {
			t.Errorf("LastError = %q, want %q", s.LastError, c.want)
		}
		if s.State != StateServing || s.Reloads != 0 || s.Digest != digest(echo) || s.OperatorDigest != digest([]byte(good)) {
			t.Errorf("Status = %+v, want the first version serving with the first operator file", s)
		}
		if p, _ := m.Lookup("echo"); p != first {
			t.Error("the version serving changed")
		}
		if sv, _ := servedAs(m, "echo"); sv.Timeout != time.Second || sv.Concurrency != 1 {
			t.Errorf("Served = %+v, want the old settings", sv)
		}
		mustEcho(t, m, "echo")
	}
	if !logs.Contains("plugin reload failed: the old version keeps serving") {
		t.Error("the failure is not logged")
	}

	writeOperator(t, dir, "echo", `{"timeout": "3s"}`)
	testkit.WaitFor(t, "the new settings", func() bool {
		sv, _ := servedAs(m, "echo")
		return sv.Timeout == 3*time.Second && sv.Concurrency == hostConcurrency
	})
	if s, _ := status(m, "echo"); s.LastError != "" || s.Reloads != 1 || s.State != StateServing {
		t.Errorf("Status = %+v", s)
	}
	mustEcho(t, m, "echo")
}

// TestOperatorInvalidFirstLoad: with an invalid operator file the plugin
// is not served at all; LoadAll reports the file's error.
func TestOperatorInvalidFirstLoad(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
	testkit.Install(t, dir, "wat-echo.wasm", readPlugin(t, "wat-echo"))
	writeOperator(t, dir, "echo", `{"pool": -1}`)
	writeOperator(t, dir, "wat-echo", `{"commands": {"echo": {"timeout": "1s"}}}`)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	errs := m.LoadAll(context.Background())
	if len(errs) != 2 ||
		!strings.Contains(errs[0].Error(), `plugin echo: echo.json: "pool": -1 is out of range`) ||
		!strings.Contains(errs[1].Error(), `plugin wat-echo: wat-echo.json: "commands.echo": the module declares no command "echo" (it declares wat-echo)`) {
		t.Fatalf("LoadAll = %v", errs)
	}
	if got := served(m); len(got) != 0 {
		t.Errorf("served %v", got)
	}
	for _, name := range []string{"echo", "wat-echo"} {
		if s, _ := status(m, name); s.State != StateFailed || s.LastError == "" || s.Operator != "" {
			t.Errorf("Status(%s) = %+v", name, s)
		}
	}
	// The same content is not loaded again unasked; a fixed file is.
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Errorf("LoadAll again: %v", errs)
	}
	writeOperator(t, dir, "echo", `{"pool": 1}`)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Errorf("LoadAll after the fix: %v", errs)
	}
	mustEcho(t, m, "echo")
}

// TestOperatorCommandTimeouts: the per-command timeout wins over the
// plugin-level one; both reach Served, with the concurrency.
func TestOperatorCommandTimeouts(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "probe.wasm", readPlugin(t, "probe"))
	writeOperator(t, dir, "probe", `{"timeout": "2s", "commands": {"probe-status": {"timeout": "500ms"}}, "concurrency": 3}`)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	changes := onChanges(m)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	cmds := m.Commands()
	if len(cmds) < 5 {
		t.Fatalf("Commands = %+v", cmds)
	}
	for _, s := range cmds {
		want := 2 * time.Second
		if s.Name() == "probe-status" {
			want = 500 * time.Millisecond
		}
		if s.Timeout != want || s.Concurrency != 3 {
			t.Errorf("%s: timeout %v, concurrency %d; want %v, 3", s.Name(), s.Timeout, s.Concurrency, want)
		}
		if s.Name() == "probe-request" && s.Declared.Timeout != 3*time.Second {
			t.Errorf("probe-request: Command.Timeout %v, want the module's declared 3s", s.Declared.Timeout)
		}
	}

	// A change of settings alone is a change for OnChange.
	before := changes.get()
	writeOperator(t, dir, "probe", `{"commands": {"probe-status": {"timeout": "250ms"}}}`)
	if err := m.Reload(context.Background(), "probe"); err != nil {
		t.Fatal(err)
	}
	if s, _ := servedAs(m, "probe-status"); s.Timeout != 250*time.Millisecond || s.Concurrency != hostConcurrency {
		t.Errorf("probe-status: %+v", s)
	}
	if s, _ := servedAs(m, "probe-request"); s.Timeout != 3*time.Second || s.TimeoutSource != TimeoutFromModule {
		t.Errorf("probe-request: %+v, want the module's declared 3s", s)
	}
	if changes.get() != before+1 {
		t.Errorf("OnChange calls %d, want %d", changes.get(), before+1)
	}
}

// TestOperatorInvalidRemoved: deleting an invalid operator file takes its
// error away: the plugin is back to the files it serves.
func TestOperatorInvalidRemoved(t *testing.T) {
	for _, before := range []string{"", `{"pool": 1}`} {
		t.Run(fmt.Sprintf("operator file before %q", before), func(t *testing.T) {
			dir := t.TempDir()
			testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
			if before != "" {
				writeOperator(t, dir, "echo", before)
			}
			m, _ := newManager(t, dir, 50*time.Millisecond)
			watch(t, m)
			testkit.WaitFor(t, "echo to be served", func() bool {
				_, ok := m.Lookup("echo")
				return ok
			})
			writeOperator(t, dir, "echo", `{"timeout": "1s",}`)
			testkit.WaitFor(t, "the error in Status", func() bool {
				s, _ := status(m, "echo")
				return s.LastError != ""
			})
			if err := os.Remove(filepath.Join(dir, "echo"+OperatorExt)); err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, "the error to go with its file", func() bool {
				s, _ := status(m, "echo")
				return s.LastError == "" && s.State == StateServing && s.Operator == ""
			})
			mustEcho(t, m, "echo")
		})
	}
}

// TestOperatorInvalidFromStartRemoved: a plugin refused from its first
// load for its operator file is served once that file is deleted, with
// no error left.
func TestOperatorInvalidFromStartRemoved(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
	writeOperator(t, dir, "echo", `{"timeout": "1s",}`)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	if errs := m.LoadAll(context.Background()); len(errs) != 1 {
		t.Fatalf("LoadAll = %v, want the operator file's error", errs)
	}
	watch(t, m)
	if err := os.Remove(filepath.Join(dir, "echo"+OperatorExt)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "echo to be served without its error", func() bool {
		s, _ := status(m, "echo")
		return s.LastError == "" && s.State == StateServing
	})
	mustEcho(t, m, "echo")
}
