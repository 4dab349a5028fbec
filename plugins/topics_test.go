package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// installTopics installs, as plugin name, a copy of the topics test plugin
// whose operator file makes it declare commands ("NAME=PATTERN ...", see
// testdata/topics).
func installTopics(t *testing.T, dir, name, commands string) {
	t.Helper()
	b, err := os.ReadFile("../testdata/plugins-alt/topics.wasm")
	if err != nil {
		t.Fatalf("reading the topics test plugin: %v (run `make plugins`)", err)
	}
	writeOperator(t, dir, name, `{"config": {"commands": "`+commands+`"}}`)
	testkit.Install(t, dir, name+".wasm", b)
}

// The rule on a command's topic pattern, as a module declares it.
func TestCheckTopics(t *testing.T) {
	for _, pattern := range []string{
		"", // the host's default
		"rpc/{executorId}/{commandName}",
		"svc/{executorId}/thermostat/set",
		"rpc/{executorId}/{commandName}/{version}",
		"dtmi:com:example;1/{executorId}/{commandName}",
	} {
		if err := CheckTopics(&abi.Description{Commands: []abi.Command{{Name: "c", Topic: pattern}}}); err != nil {
			t.Errorf("%q refused: %v", pattern, err)
		}
	}
	for _, c := range []struct{ pattern, want string }{
		{"{a}/{b}/{c}/{d}", `command c: topic pattern "{a}/{b}/{c}/{d}" starts with the token {a}: start with a literal level`},
		{"{executorId}/x", `starts with the token {executorId}`},
		{"rpc/other-host/echo", `command c: topic pattern "rpc/other-host/echo" does not have {executorId} as its second level`},
		{"cmdhost/{executorId}/admin/{op}", `topic pattern "cmdhost/{executorId}/admin/{op}" starts with "cmdhost", the host's own topics`},
		{"cmdhost/{executorId}/events", `starts with "cmdhost"`},
		{"$share/g/{executorId}/x", `starts with "$share": levels starting with '$' are the broker's`},
		{"rpc/{executorId}/{bad token}", `token "{bad token}"`},
		{"rpc/{executorId}/x{y}", `level "x{y}"`},
		// A level before {executorId} could be another executor's id: with
		// our id "echo", rpc/{x}/{executorId} matches rpc/other-host/echo.
		{"rpc/{x}/{executorId}", `does not have {executorId} as its second level`},
		{"rpc/{commandName}/{executorId}", `does not have {executorId} as its second level`},
		{"rpc", `does not have {executorId} as its second level`},
	} {
		err := CheckTopics(&abi.Description{Commands: []abi.Command{{Name: "c", Topic: c.pattern}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.pattern, err, c.want)
		}
	}
	// Two commands of one module whose topics overlap.
	err := CheckTopics(&abi.Description{Commands: []abi.Command{
		{Name: "a", Topic: "rpc/{executorId}/{op}"},
		{Name: "b"},
	}})
	want := `commands a and b have overlapping topics "rpc/{executorId}/{op}" and "rpc/{executorId}/{commandName}" (= rpc/{executorId}/b): a request could reach both; give each command a topic of its own`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("overlap within a module: %v, want %q", err, want)
	}
}

// A plugin may serve only topics the host gives it: the hostile patterns
// are refused at load with a message that names the plugin, the command,
// the pattern and the fix; the others keep serving.
func TestTopicsOwnedByHost(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
	hostile := map[string]struct{ commands, want string }{
		"anything":  {"steal={a}/{b}/{c}/{d}", `plugin anything: command steal: topic pattern "{a}/{b}/{c}/{d}" starts with the token {a}`},
		"impostor":  {"echo2=rpc/other-host/echo", `plugin impostor: command echo2: topic pattern "rpc/other-host/echo" does not have {executorId} as its second level`},
		"admin":     {"admin=cmdhost/{executorId}/admin/{op}", `plugin admin: command admin: topic pattern "cmdhost/{executorId}/admin/{op}" starts with "cmdhost"`},
		"broker":    {"sys=$SYS/{executorId}/x", `plugin broker: command sys: topic pattern "$SYS/{executorId}/x" starts with "$SYS"`},
		"overlap":   {"a=rpc/{executorId}/x/{k} b=rpc/{executorId}/{k}/y", `plugin overlap: commands a and b have overlapping topics "rpc/{executorId}/x/{k}" and "rpc/{executorId}/{k}/y"`},
		"catch-all": {"c=rpc/{executorId}/{op} d=", `plugin catch-all: commands c and d have overlapping topics "rpc/{executorId}/{op}" and "rpc/{executorId}/{commandName}" (= rpc/{executorId}/d)`},
	}
	for name, h := range hostile {
		installTopics(t, dir, name, h.commands)
	}
	installTopics(t, dir, "good", "thermo=svc/{executorId}/thermostat/set plain=")
	m, _ := newManager(t, dir, 0)

	errs := m.LoadAll(context.Background())
	if len(errs) != len(hostile) {
		t.Errorf("LoadAll: %d errors, want %d: %v", len(errs), len(hostile), errs)
	}
	for name, h := range hostile {
		s, _ := status(m, name)
		if s.State != StateFailed || s.LoadFailures != 1 || !strings.Contains(s.LastError, h.want) {
			t.Errorf("Status(%s) = state %s, %d failures, error %q; want failed once saying %q", name, s.State, s.LoadFailures, s.LastError, h.want)
		}
	}
	if got, want := strings.Join(served(m), " "), "echo:echo good:plain good:thermo"; got != want {
		t.Errorf("served %q, want %q", got, want)
	}
	mustEcho(t, m, "echo")
}

// Overlapping topics between plugins: the plugin already serving keeps
// its topic, the newcomer is refused with a message naming both plugins
// and both patterns, everything else goes on routing, and the refused
// plugin is retried when the topic is freed (its owner goes, or moves to
// another topic).
func TestTopicClash(t *testing.T) {
	dir := t.TempDir()
	testkit.Install(t, dir, "echo.wasm", readPlugin(t, "echo"))
	installTopics(t, dir, "owner", "own=svc/{executorId}/shared")
	m, _ := newManager(t, dir, 0)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}

	installTopics(t, dir, "clash", "clash=rpc/{executorId}/echo")
	err := m.Reload(context.Background(), "clash")
	want := `plugin clash: command clash's topic "rpc/{executorId}/echo" overlaps command echo's "rpc/{executorId}/{commandName}" (= rpc/{executorId}/echo), served by plugin echo; clash not loaded`
	if err == nil || err.Error() != want {
		t.Fatalf("Reload(clash) = %v\nwant %s", err, want)
	}
	installTopics(t, dir, "wants", "wants={x}/{executorId}/shared")
	if err := m.Reload(context.Background(), "wants"); err == nil || !strings.Contains(err.Error(), "start with a literal level") {
		t.Fatalf("Reload(wants) = %v", err)
	}
	installTopics(t, dir, "wants", "wants=svc/{executorId}/{what}")
	if err := m.Reload(context.Background(), "wants"); err == nil ||
		!strings.Contains(err.Error(), `overlaps command own's "svc/{executorId}/shared", served by plugin owner; wants not loaded`) {
		t.Fatalf("Reload(wants) = %v", err)
	}
	// A plugin added after the refused ones serves.
	installTopics(t, dir, "later", "later=")
	if err := m.Reload(context.Background(), "later"); err != nil {
		t.Fatalf("a plugin added after a refused one: %v", err)
	}
	mustEcho(t, m, "echo")
	if resp, err := call(m, "later", "x"); err != nil || string(resp.Payload) != "later:x" {
		t.Fatalf("later: %v %v", resp, err)
	}
	if s, _ := status(m, "clash"); s.State != StateFailed || s.LoadFailures != 1 || s.LastError != want {
		t.Errorf("Status(clash) = %+v", s)
	}

	// A reload of the owner that would take a topic served by another
	// plugin is refused; the old version keeps serving.
	installTopics(t, dir, "owner", "own=rpc/{executorId}/later")
	if err := m.Reload(context.Background(), "owner"); err == nil ||
		!strings.Contains(err.Error(), "served by plugin later; the new version of owner is refused and the old one keeps serving") {
		t.Fatalf("Reload(owner) onto later's topic = %v", err)
	}
	if s, _ := status(m, "owner"); s.State != StateServing {
		t.Fatalf("Status(owner) = %+v", s)
	}

	// The owner moves to another topic (same command): wants is retried
	// and takes its pattern.
	installTopics(t, dir, "owner", "own=svc/{executorId}/elsewhere/x")
	if err := m.Reload(context.Background(), "owner"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "wants to be retried once owner moved", func() bool {
		s, _ := status(m, "wants")
		return s.State == StateServing
	})
	// echo goes: clash is retried and serves.
	if err := os.Remove(filepath.Join(dir, "echo.wasm")); err != nil {
		t.Fatal(err)
	}
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatalf("LoadAll: %v", errs)
	}
	testkit.WaitFor(t, "clash to be retried once echo went", func() bool {
		s, _ := status(m, "clash")
		return s.State == StateServing
	})
	if resp, err := call(m, "clash", "x"); err != nil || string(resp.Payload) != "clash:x" {
		t.Fatalf("clash: %v %v", resp, err)
	}
}
