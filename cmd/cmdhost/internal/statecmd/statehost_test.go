package statecmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The state commands through a running host (the kit plugin's
// kit-state writes and reads its own namespace): namespaces are open,
// reads and writes need the admin token (403 and audited without it,
// nothing written); with it, a write applies and the plugin reads it,
// and what the plugin writes the CLI reads; export and import go
// through the host; the folder it holds cannot be opened offline; the
// metrics, plugin list and watch show the namespace.
func TestStateThroughHost(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, "../../../../testdata/plugins-kit/kit-go.wasm", dir, "kit-go.wasm")
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("state-Token-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stateDir, metrics := t.TempDir(), clitest.FreeAddr(t)
	addr, stop := clitest.StartServeIn(t, dir, nil, "--admin-token-file", tok, "--state-dir", stateDir, "--metrics", metrics)
	host := []string{"--broker", "mqtt://" + addr, "--executor", "cli-host"}
	withToken := append([]string{"--token-file", tok}, host...)
	kit := func(payload string) string {
		t.Helper()
		out, errOut, code := clitest.Run(t, append([]string{"invoke", "kit-state", "-d", payload}, host...)...)
		if code != 0 {
			t.Fatalf("invoke kit-state -d %q: %q %d", payload, errOut, code)
		}
		return out
	}
	state := func(args ...string) []string { return append(append([]string{"state"}, args...), host...) }
	stateTok := func(args ...string) []string { return append(append([]string{"state"}, args...), withToken...) }

	if out := kit("set k from-plugin"); out != "ok" {
		t.Fatalf("kit-state set: %q", out)
	}
	expectRun(t, 0, "plugin/kit-go  1     12", "", state("namespaces")...)
	expectRun(t, base.ExitFailed, "", "status 403: missing admin token", state("get", "plugin/kit-go", "k")...)
	expectRun(t, 0, "from-plugin", "", stateTok("get", "plugin/kit-go", "k")...)
	expectRun(t, base.ExitFailed, "", "status 403: missing admin token", state("set", "plugin/kit-go", "k", "from-cli")...)
	if out := kit("get k"); !strings.HasPrefix(out, "from-plugin@") {
		t.Fatalf("after a set refused for its token, the plugin reads %q", out)
	}
	out := expectRun(t, 0, `set "k" in plugin/kit-go: version `, "", stateTok("set", "plugin/kit-go", "k", "from-cli")...)
	version := strings.TrimSpace(out[strings.LastIndex(out, " ")+1:])
	if got := kit("get k"); got != "from-cli@"+version {
		t.Fatalf("the plugin reads %q after the CLI set version %s", got, version)
	}
	expectRun(t, base.ExitFailed, "", "status 409: condition failed", stateTok("set", "--plugin", "kit-go", "k", "again", "--if-version", "1")...)
	expectRun(t, base.ExitFailed, "", `status 404: no key "nothing" in namespace plugin/kit-go`, stateTok("get", "plugin/kit-go", "nothing")...)
	expectRun(t, 0, "k    8      "+version, "", stateTok("list", "plugin/kit-go")...)

	// The folder is the host's while it runs.
	expectRun(t, base.ExitFailed, "", "is held by a running host (cmdhost serve): go through it with --executor ID", "state", "list", "--state-dir", stateDir)

	// Export and import through the host: the plugin reads what came in;
	// a bad line writes nothing.
	exported := expectRun(t, 0, `{"key":"k","value":"from-cli","version":`+version+"}", "exported 1 key of plugin/kit-go", stateTok("export", "plugin/kit-go")...)
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(exported+`{"key":"imported","value":"42"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, base.ExitFailed, "", "status 403", state("import", "plugin/kit-go", "-f", file)...)
	expectRun(t, 0, "imported 2 keys into plugin/kit-go in 1 commit", "", stateTok("import", "plugin/kit-go", "-f", file)...)
	if got := kit("get imported"); !strings.HasPrefix(got, "42@") {
		t.Fatalf("the plugin reads %q after the import", got)
	}
	if err := os.WriteFile(file, []byte(`{"key":"more","value":"1"}`+"\n"+`{"key":"more2","value":}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, base.ExitFailed, "", "line 2: not a key as export writes it", stateTok("import", "plugin/kit-go", "-f", file)...)
	if got := kit("get more"); got != "missing" {
		t.Fatalf("after a refused import, the plugin reads %q", got)
	}
	expectRun(t, 0, `deleted "imported" from plugin/kit-go`, "", stateTok("delete", "plugin/kit-go", "imported")...)

	// plugin list and the metrics show the namespace.
	listed := expectRun(t, 0, "", "", append([]string{"plugin", "list", "--json"}, host...)...)
	var views []admin.PluginView
	if err := json.Unmarshal([]byte(listed), &views); err != nil || len(views) != 1 || views[0].StateKeys != 1 || views[0].StateBytes != 9 {
		t.Errorf("plugin list --json: %v %s", err, listed)
	}
	table := expectRun(t, 0, "RELOADS  KEYS  BYTES  LAST ERROR", "", append([]string{"plugin", "list"}, host...)...)
	if row := strings.Fields(strings.Split(table, "\n")[1]); len(row) < 14 || row[0] != "kit-go" || row[11] != "1" || row[12] != "9" {
		t.Errorf("plugin list: %q", table)
	}
	if frame := expectRun(t, 0, "", "", append([]string{"watch", "--count", "1"}, host...)...); !strings.Contains(frame, `"stateKeys":1,"stateBytes":9`) {
		t.Errorf("watch --json: %s", frame)
	}
	scrape := clitest.ScrapeMetrics(t, metrics)
	if v := clitest.MetricValue(t, scrape, `cmdhost_state_namespace_keys{namespace="plugin/kit-go"}`); v != 1 {
		t.Errorf("cmdhost_state_namespace_keys of plugin/kit-go: %v", v)
	}
	if v := clitest.MetricValue(t, scrape, `cmdhost_state_commits_total{result="applied"}`); v < 4 {
		t.Errorf("cmdhost_state_commits_total applied: %v, want the plugin's and the CLI's", v)
	}
	if v := clitest.MetricValue(t, scrape, `cmdhost_plugin_state_ops_total{op="set",plugin="kit-go",result="ok"}`); v != 1 {
		t.Errorf("the plugin's sets: %v, want 1", v)
	}
	if v := clitest.MetricValue(t, scrape, `cmdhost_plugin_state_ops_total{op="get",plugin="kit-go",result="not_found"}`); v != 1 {
		t.Errorf("the plugin's gets of a key not there: %v, want 1", v)
	}
	if v := clitest.MetricValue(t, scrape, `cmdhost_state_commits_total{result="conflict"}`); v != 1 {
		t.Errorf("cmdhost_state_commits_total conflict: %v", v)
	}

	// The audit: each refusal for the token and each write.
	log, _ := stop()
	for _, want := range []string{
		`msg="admin op" op=state-get verdict=forbidden`,
		`msg="admin op" op=state-set verdict=done plugin=kit-go`,
		`target="plugin/kit-go key \"k\""`,
		`msg="admin op" op=state-set verdict=refused plugin=kit-go`,
		`msg="admin op" op=state-import verdict=done plugin=kit-go`,
		`target="plugin/kit-go (2 keys)"`,
		`msg="admin state read" op=state-get namespace=plugin/kit-go`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the host's log has no %s", want)
		}
	}
}
