package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestExecTimeoutPrecedence: every combination of the four levels set or
// unset resolves to the first found, operator command > operator plugin >
// module > host default, with its source; a "commands" entry of another
// command, or one of this command without "timeout", does not count.
// Resolve records the same.
func TestExecTimeoutPrecedence(t *testing.T) {
	const (
		command = 1 * time.Second // operator file, "commands": {"get": {"timeout": "1s"}}
		plugin  = 2 * time.Second // operator file, "timeout": "2s"
		module  = 3 * time.Second // declared by the module
		host    = 4 * time.Second // serve --exec-timeout
	)
	cases := []struct {
		command, plugin, module, host time.Duration // 0: unset
		want                          time.Duration
		source                        TimeoutSource
	}{
		{0, 0, 0, 0, 0, TimeoutFromHost}, // none at all: the request's expiry alone
		{0, 0, 0, host, host, TimeoutFromHost},
		{0, 0, module, 0, module, TimeoutFromModule},
		{0, 0, module, host, module, TimeoutFromModule},
		{0, plugin, 0, 0, plugin, TimeoutFromOperatorPlugin},
		{0, plugin, 0, host, plugin, TimeoutFromOperatorPlugin},
		{0, plugin, module, 0, plugin, TimeoutFromOperatorPlugin},
		{0, plugin, module, host, plugin, TimeoutFromOperatorPlugin},
		{command, 0, 0, 0, command, TimeoutFromOperatorCommand},
		{command, 0, 0, host, command, TimeoutFromOperatorCommand},
		{command, 0, module, 0, command, TimeoutFromOperatorCommand},
		{command, 0, module, host, command, TimeoutFromOperatorCommand},
		{command, plugin, 0, 0, command, TimeoutFromOperatorCommand},
		{command, plugin, 0, host, command, TimeoutFromOperatorCommand},
		{command, plugin, module, 0, command, TimeoutFromOperatorCommand},
		{command, plugin, module, host, command, TimeoutFromOperatorCommand},
	}
	for _, c := range cases {
		name := fmt.Sprintf("command=%v,plugin=%v,module=%v,host=%v", c.command, c.plugin, c.module, c.host)
		t.Run(name, func(t *testing.T) {
			cmd := abi.Command{Name: "get", Timeout: c.module}
			// The operator file: its "commands" entry for another command
			// never applies, nor one for "get" that sets no timeout.
			op := &Operator{File: "kv.json", Enabled: true, Timeout: c.plugin,
				Commands: map[string]CommandSettings{"put": {Timeout: 9 * time.Second}}}
			if c.command > 0 {
				op.Commands["get"] = CommandSettings{Timeout: c.command}
			} else {
				op.Commands["get"] = CommandSettings{OnTimeout: &OnTimeout{}}
			}
			ops := map[string]*Operator{"operator file": op}
			if c.command == 0 && c.plugin == 0 {
				ops["no operator file"] = nil
			}
			for what, op := range ops {
				if d, src := op.execTimeout(cmd, c.host); d != c.want || src != c.source {
					t.Errorf("%s: execTimeout = %v (%s), want %v (%s)", what, d, src, c.want, c.source)
				}
				host := c.host
				if host == 0 {
					host = NoTimeout // unset at the host: serve --exec-timeout 0
				}
				s := Resolve("kv", cmd, op, Defaults{ExecTimeout: host, Concurrency: 3})
				if s.Timeout != c.want || s.TimeoutSource != c.source || s.Plugin != "kv" || s.Name() != "get" || s.Concurrency != 3 || s.Topic != "rpc/{executorId}/{commandName}" {
					t.Errorf("%s: Resolve = %+v, want %v (%s)", what, s, c.want, c.source)
				}
			}
		})
	}
}

// TestExecTimeoutHostDefault: Defaults with no ExecTimeout give the
// commands nothing else times DefaultExecTimeout; NoTimeout gives them
// none (Command.Timeout 0).
func TestExecTimeoutHostDefault(t *testing.T) {
	cmd := abi.Command{Name: "get"}
	if s := Resolve("kv", cmd, nil, Defaults{}); s.Timeout != DefaultExecTimeout || s.TimeoutSource != TimeoutFromHost {
		t.Errorf("zero Defaults: timeout %v (%s), want %v from the host", s.Timeout, s.TimeoutSource, DefaultExecTimeout)
	}
	if s := Resolve("kv", cmd, nil, Defaults{ExecTimeout: NoTimeout}); s.Timeout != 0 || s.TimeoutSource != TimeoutFromHost {
		t.Errorf("NoTimeout: timeout %v (%s), want none from the host", s.Timeout, s.TimeoutSource)
	}
}

// TestParseOnTimeout: "onTimeout" and "retries", at plugin level and per
// command (which wins); every misuse is refused naming file, field and fix.
func TestParseOnTimeout(t *testing.T) {
	good := []struct {
		content   string
		get, put  OnTimeout // the policies of commands get and put
		pluginSet bool
	}{
		{`{}`, OnTimeout{}, OnTimeout{}, false},
		{`{"onTimeout": "fail"}`, OnTimeout{}, OnTimeout{}, true},
		{`{"onTimeout": "retry", "retries": 2}`, OnTimeout{2}, OnTimeout{2}, true},
		{`{"retries": 10, "onTimeout": "retry"}`, OnTimeout{10}, OnTimeout{10}, true},
		{`{"commands": {"get": {"onTimeout": "retry", "retries": 1}}}`, OnTimeout{1}, OnTimeout{}, false},
		{`{"onTimeout": "retry", "retries": 3, "commands": {"put": {"onTimeout": "fail"}}}`, OnTimeout{3}, OnTimeout{}, true},
		{`{"onTimeout": "retry", "retries": 3, "commands": {"put": {"onTimeout": "retry", "retries": 1, "timeout": "1s"}}}`, OnTimeout{3}, OnTimeout{1}, true},
	}
	for _, c := range good {
		op, err := ParseOperator("/p/kv.json", []byte(c.content))
		if err != nil {
			t.Errorf("%s: %v", c.content, err)
			continue
		}
		if got := op.onTimeoutOf("get"); got != c.get {
			t.Errorf("%s: get %v, want %v", c.content, got, c.get)
		}
		if got := op.onTimeoutOf("put"); got != c.put {
			t.Errorf("%s: put %v, want %v", c.content, got, c.put)
		}
		if (op.OnTimeout != nil) != c.pluginSet {
			t.Errorf("%s: plugin-level OnTimeout %v", c.content, op.OnTimeout)
		}
	}
	if (*Operator)(nil).onTimeoutOf("get") != (OnTimeout{}) {
		t.Error("no operator file: the policy is not fail")
	}

	bad := []struct{ content, want string }{
		{`{"onTimeout": "abort"}`, `kv.json: "onTimeout": "abort" is not an on_timeout policy: write "fail" (the default: answer 408) or "retry"`},
		{`{"onTimeout": "Retry", "retries": 1}`, `kv.json: "onTimeout": "Retry": did you mean "retry"? (policies are lowercase)`},
		{`{"onTimeout": true}`, `kv.json: "onTimeout": is a boolean: write "fail" or "retry"`},
		{`{"onTimeout": "retry"}`, `kv.json: "onTimeout": "retry" needs "retries", how many more times a timed-out call may run (1 to 10): add e.g. "retries": 2`},
		{`{"retries": 2}`, `kv.json: "retries": is set without "onTimeout": "retry": add "onTimeout": "retry", or remove "retries"`},
		{`{"onTimeout": "fail", "retries": 2}`, `kv.json: "retries": is set, but "onTimeout" is "fail", which never retries`},
		{`{"onTimeout": "retry", "retries": 0}`, `kv.json: "retries": 0 is out of range: write a whole number from 1 to 10`},
		{`{"onTimeout": "retry", "retries": 11}`, `kv.json: "retries": 11 is out of range`},
		{`{"onTimeout": "retry", "retries": "2"}`, `kv.json: "retries": is a string: write a whole number from 1 to 10`},
		{`{"onTimeout": "retry", "retries": 1, "onTimeout": "fail"}`, `kv.json: "onTimeout": is given twice`},
		{`{"on_timeout": "retry"}`, `kv.json: "on_timeout": unknown field`},
		{`{"OnTimeout": "retry"}`, `kv.json: "OnTimeout": unknown field: did you mean "onTimeout"?`},
		{`{"commands": {"get": {"onTimeout": "retry"}}}`, `kv.json: "commands.get.onTimeout": "retry" needs "retries"`},
		{`{"commands": {"get": {"retries": 1}}}`, `kv.json: "commands.get.retries": is set without "onTimeout": "retry"`},
		{`{"onTimeout": "retry", "retries": 2, "commands": {"get": {"retries": 1}}}`, `kv.json: "commands.get.retries": is set without "onTimeout": "retry"`},
		{`{"commands": {"get": {"onTimeout": "never"}}}`, `kv.json: "commands.get.onTimeout": "never" is not an on_timeout policy`},
	}
	for _, c := range bad {
		op, err := ParseOperator("/plugins/kv.json", []byte(c.content))
		if err == nil {
			t.Errorf("%s: accepted as %+v", c.content, op)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.content, err, c.want)
		}
	}
}

// TestCheckOnTimeout: a retry policy that would apply to a command the
// module does not declare idempotent refuses the file, per command and
// at plugin level; on idempotent commands only, it is accepted.
func TestCheckOnTimeout(t *testing.T) {
	kv := &abi.Description{Commands: []abi.Command{
		{Name: "get", Idempotent: true}, {Name: "put"}, {Name: "list", Idempotent: true},
	}}
	writes := &abi.Description{Commands: []abi.Command{{Name: "put"}, {Name: "delete"}}}
	cases := []struct {
		desc    *abi.Description
		content string
		want    string // "": accepted
	}{
		{kv, `{"commands": {"get": {"onTimeout": "retry", "retries": 2}, "list": {"onTimeout": "retry", "retries": 1}}}`, ""},
		{kv, `{"commands": {"put": {"onTimeout": "fail"}}}`, ""},
		{kv, `{"onTimeout": "fail"}`, ""},
		{kv, `{"commands": {"put": {"onTimeout": "retry", "retries": 2}}}`,
			`kv.json: "commands.put.onTimeout": "retry" needs an idempotent command, and the module does not declare put idempotent (a retry would run its effects twice): write "onTimeout": "fail", or remove "onTimeout" and "retries" from the entry`},
		{kv, `{"onTimeout": "retry", "retries": 2}`,
			`kv.json: "onTimeout": "retry" applies to every command of the plugin, and the module does not declare put idempotent (a retry would run its effects twice): set it per command instead, on idempotent commands only (get, list), e.g. "commands": {"get": {"onTimeout": "retry", "retries": 2}}, and remove "onTimeout" and "retries" here`},
		// The plugin-level retry reaches only idempotent commands: the
		// others say "fail" themselves.
		{kv, `{"onTimeout": "retry", "retries": 2, "commands": {"put": {"onTimeout": "fail"}}}`, ""},
		{writes, `{"onTimeout": "retry", "retries": 1}`,
			`kv.json: "onTimeout": "retry" applies to every command of the plugin, and the module does not declare put idempotent (a retry would run its effects twice): remove "onTimeout" and "retries": the module declares no idempotent command`},
		// Names are checked first.
		{kv, `{"commands": {"gte": {"onTimeout": "retry", "retries": 1}}}`, `kv.json: "commands.gte": the module declares no command "gte" (it declares get, put, list): fix the name or remove the entry`},
	}
	for _, c := range cases {
		op, err := ParseOperator("/plugins/kv.json", []byte(c.content))
		if err != nil {
			t.Fatalf("%s: %v", c.content, err)
		}
		err = op.CheckCommands(c.desc)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.content, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted", c.content)
		case c.want != "" && err.Error() != c.want:
			t.Errorf("%s:\n got %v\nwant %s", c.content, err, c.want)
		}
	}
}

// TestOnTimeoutAtLoad: the manager refuses, with the file's error, a retry
// policy on counter (not idempotent), at plugin level and per command, and
// serves counter-idem (idempotent) with it; Command carries the policy and
// a change of the operator file changes it.
func TestOnTimeoutAtLoad(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "counter.wasm", readPlugin(t, "counter"))
	testkit.Install(t, dir, "counter-idem.wasm", readPlugin(t, "counter-idem"))
	writeOperator(t, dir, "counter", `{"onTimeout": "retry", "retries": 2}`)
	writeOperator(t, dir, "counter-idem", `{"onTimeout": "retry", "retries": 2}`)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	changes := onChanges(m)
	errs := m.LoadAll(context.Background())
	want := `plugin counter: counter.json: "onTimeout": "retry" applies to every command of the plugin, and the module does not declare counter idempotent`
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
		t.Fatalf("LoadAll = %v, want %s", errs, want)
	}
	if s, _ := status(m, "counter"); s.State != StateFailed || !strings.Contains(s.LastError, want) {
		t.Errorf("Status(counter) = %+v", s)
	}
	if s, ok := servedAs(m, "counter-idem"); !ok || s.OnTimeout != (OnTimeout{Retries: 2}) || s.OnTimeout.String() != "retry ×2" {
		t.Errorf("Served(counter-idem) = %+v, want retry ×2", s)
	}

	// Per command: refused too.
	writeOperator(t, dir, "counter", `{"commands": {"counter": {"onTimeout": "retry", "retries": 1}}}`)
	err := m.Reload(context.Background(), "counter")
	want = `plugin counter: counter.json: "commands.counter.onTimeout": "retry" needs an idempotent command, and the module does not declare counter idempotent`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Reload(counter) = %v, want %s", err, want)
	}
	if _, ok := m.Lookup("counter"); ok {
		t.Error("counter is served")
	}
	// "fail" is fine.
	writeOperator(t, dir, "counter", `{"commands": {"counter": {"onTimeout": "fail", "timeout": "1s"}}}`)
	if err := m.Reload(context.Background(), "counter"); err != nil {
		t.Fatal(err)
	}
	if s, _ := servedAs(m, "counter"); s.OnTimeout != (OnTimeout{}) || s.Timeout != time.Second || s.TimeoutSource != TimeoutFromOperatorCommand {
		t.Errorf("Served(counter) = %+v", s)
	}

	// A change of the policy alone reaches Command and OnChange.
	before := changes.get()
	writeOperator(t, dir, "counter-idem", `{"commands": {"counter-idem": {"onTimeout": "retry", "retries": 5}}}`)
	if err := m.Reload(context.Background(), "counter-idem"); err != nil {
		t.Fatal(err)
	}
	if s, _ := servedAs(m, "counter-idem"); s.OnTimeout != (OnTimeout{Retries: 5}) || s.TimeoutSource != TimeoutFromHost {
		t.Errorf("Served(counter-idem) = %+v, want retry ×5", s)
	}
	if changes.get() != before+1 {
		t.Errorf("OnChange calls %d, want %d", changes.get(), before+1)
	}
	// A refused change keeps the old policy serving.
	writeOperator(t, dir, "counter-idem", `{"onTimeout": "retry"}`)
	if err := m.Reload(context.Background(), "counter-idem"); err == nil || !strings.Contains(err.Error(), `"onTimeout": "retry" needs "retries"`) {
		t.Errorf("Reload with retry and no retries: %v", err)
	}
	if s, _ := servedAs(m, "counter-idem"); s.OnTimeout != (OnTimeout{Retries: 5}) {
		t.Errorf("Served(counter-idem) = %+v, want the old retry ×5", s)
	}
}
