package plugincmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestInspectReach: plugin inspect shows what a module asks for (its
// imports: publish, http, state, invoke, config; its triggers) beside
// what its operator file grants, step by step: with no file, every
// capability the file grants is "not granted" with the key to add; with
// a file granting some, those show what is granted (names, never a
// config or secret value) and the rest stay missing; a grant the module
// does not ask for is shown as such; a module asking for nothing shows
// none of them.
func TestInspectReach(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	kit, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "plugins-kit", "kit-go.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wasmFile := filepath.Join(dir, "kit-go.wasm")
	if err := os.WriteFile(wasmFile, kit, 0o644); err != nil {
		t.Fatal(err)
	}
	line := func(out, capability, asks, granted string) {
		t.Helper()
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(capability) + `\s+` + regexp.QuoteMeta(asks) + `\s+` + regexp.QuoteMeta(granted) + `$`)
		if !re.MatchString(out) {
			t.Errorf("no line %q / %q / %q in:\n%s", capability, asks, granted, out)
		}
	}

	// Step 0: no operator file.
	out, errOut, code := clitest.Run(t, "plugin", "inspect", wasmFile)
	if code != 0 {
		t.Fatalf("inspect: %q %q %d", out, errOut, code)
	}
	if !strings.Contains(out, "\nwhat it asks for, and what the operator file (none) grants:\n") {
		t.Errorf("no reach table:\n%s", out)
	}
	line(out, "publish", "publish", `not granted: add "publish": {"topics": ["TOPIC/#"]}`)
	line(out, "http", "http_request", `not granted: add "http": {"hosts": ["api.example.com"]}`)
	line(out, "config", "config_get", `not granted: add "config": {"NAME": "VALUE"}, or "secrets": {"NAME": "/path/to/file"}`)
	line(out, "trigger kit.device.any.all", "kit/{device}/+/#", `not granted: add "triggers": {"kit.device.any.all": {}}`)
	line(out, "nested calls", "invoke", `always (for the request's caller: the called command's "allow" decides)`)
	line(out, "state", "state_add, state_delete, state_get, state_list, state_set", "always (the plugin's own namespace, on a host with a state store)")

	// Step 1: publishing, HTTP, config and a secret granted, a mount the
	// module does not ask for; the trigger still not.
	secret := filepath.Join(t.TempDir(), "api-key")
	const value = "sk-inspect-91"
	if err := os.WriteFile(secret, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	op := `{"publish": {"topics": ["kit/{executorId}/events/#"]}, "http": {"hosts": ["api.example.com", "http://127.0.0.1:8080"]},
	  "config": {"region": "eu-secret-region"}, "secrets": {"apiKey": "` + secret + `"}, "state": {"shared": {"devices": "read"}},
	  "grants": {"mounts": [{"host": "` + data + `", "guest": "/data"}]}}`
	if err := os.WriteFile(filepath.Join(dir, "kit-go.json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = clitest.Run(t, "plugin", "inspect", wasmFile)
	if code != 0 {
		t.Fatalf("inspect: %q %q %d", out, errOut, code)
	}
	line(out, "publish", "publish", "topics: kit/{executorId}/events/#")
	line(out, "http", "http_request", "hosts: https://api.example.com:443, http://127.0.0.1:8080")
	line(out, "config", "config_get", "config: region; secrets: apiKey")
	line(out, "state", "state_add, state_delete, state_get, state_list, state_set", "always (the plugin's own namespace, on a host with a state store; shared: devices (read))")
	line(out, "trigger kit.device.any.all", "kit/{device}/+/#", `not granted: add "triggers": {"kit.device.any.all": {}}`)
	line(out, "filesystem", "-", "mounts: /data (not asked for)")
	for _, v := range []string{value, "eu-secret-region"} {
		if strings.Contains(out, v) {
			t.Errorf("inspect shows the value %q:\n%s", v, out)
		}
	}

	// --json: the same, by capability.
	out, _, code = clitest.Run(t, "plugin", "inspect", "--json", wasmFile)
	var in struct {
		Reach []reachView `json:"reach"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &in) != nil || strings.Contains(out, value) {
		t.Fatalf("inspect --json: %d\n%s", code, out)
	}
	clitest.CheckJSONShape(t, "plugin inspect --json", out)
	byName := map[string]reachView{}
	for _, v := range in.Reach {
		byName[v.Capability] = v
	}
	if v := byName["http"]; v.Granted != "hosts: https://api.example.com:443, http://127.0.0.1:8080" || v.Missing != "" || strings.Join(v.Asks, ",") != "http_request" {
		t.Errorf("http: %+v", v)
	}
	if v := byName["trigger kit.device.any.all"]; v.Granted != "" || v.Missing != `"triggers": {"kit.device.any.all": {}}` {
		t.Errorf("trigger: %+v", v)
	}

	// A module that asks for none of them shows none.
	echo := filepath.Join(t.TempDir(), "wat-echo.wasm")
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "plugins", "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(echo, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = clitest.Run(t, "plugin", "inspect", echo)
	if regexp.MustCompile(`(?m)^(publish|http|config|state|nested calls)\s`).MatchString(out) {
		t.Errorf("a module that imports none of them shows some:\n%s", out)
	}
}
