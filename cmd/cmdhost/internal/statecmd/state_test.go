package statecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/state"
)

// stateFolder makes a state store in a folder of its own with the
// writes of ops, closed, and returns the folder.
func stateFolder(t *testing.T, ops ...state.Op) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins.state")
	d, err := state.OpenDisk(state.DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(ops) > 0 {
		if _, err := d.Commit(context.Background(), &state.Commit{Ops: ops}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readState opens the folder after the CLI is done and returns what ns
// holds, key → value.
func readState(t *testing.T, dir, ns string) map[string]string {
	t.Helper()
	d, err := state.OpenDisk(state.DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	keys, _, err := d.List(ctx, ns, nil, nil, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		it, err := d.Get(ctx, ns, k)
		if err != nil {
			t.Fatal(err)
		}
		out[string(k)] = string(it.Value)
	}
	return out
}

func setOp(ns, key, value string, ttl time.Duration) state.Op {
	return state.Op{Kind: state.OpSet, NS: ns, Key: []byte(key), Value: []byte(value), TTL: ttl}
}

// expectRun runs cmdhost and checks its exit status and that its stdout
// and stderr hold want (each "" for anything).
func expectRun(t *testing.T, code int, wantOut, wantErr string, args ...string) string {
	t.Helper()
	out, errOut, got := clitest.Run(t, args...)
	if got != code || !strings.Contains(out, wantOut) || !strings.Contains(errOut, wantErr) {
		t.Errorf("cmdhost %s: exit %d, stdout %q, stderr %q; want exit %d, %q and %q on stderr", strings.Join(args, " "), got, out, errOut, code, wantOut, wantErr)
	}
	return out
}

// The state commands on a store's folder, offline: what they show of
// keys written by the store, what they write (read back by the store),
// and an error that names the fix for every kind of bad input.
func TestStateOffline(t *testing.T) {
	dir := stateFolder(t, setOp("plugin/kit-go", "count", "41", 0), setOp("plugin/kit-go", "lease", "me", time.Hour),
		state.Op{Kind: state.OpSet, NS: "plugin/kit-go", Key: []byte{0xff, 1}, Value: []byte{0, 0xfe}},
		setOp("shared/devices", "d1", "on", 0))
	at := []string{"--state-dir", dir}
	cmd := func(args ...string) []string { return append(args, at...) }

	out := expectRun(t, 0, "plugin/kit-go   3", "", cmd("state", "namespaces")...)
	if !strings.Contains(out, "shared/devices  1     4") || !strings.Contains(out, "2 namespaces, 4 keys, 22 bytes of the store's 1 GiB") {
		t.Errorf("namespaces: %q", out)
	}
	var all admin.StateNamespaces
	if err := json.Unmarshal([]byte(expectRun(t, 0, "", "", cmd("state", "list", "--json")...)), &all); err != nil || len(all.Namespaces) != 2 || all.Keys != 4 {
		t.Errorf("list --json without a namespace: %v %+v", err, all)
	}
	out = expectRun(t, 0, "KEY          BYTES  VERSION", "", cmd("state", "list", "plugin/kit-go")...)
	for _, want := range []string{"\ncount        2 ", "\nlease        2 ", "\nbase64:/wE=  2 "} {
		if !strings.Contains(out, want) {
			t.Errorf("list: no %q in %q", want, out)
		}
	}
	if out := expectRun(t, 0, "", "", cmd("state", "list", "--plugin", "kit-go", "--prefix", "l", "--json")...); !strings.HasPrefix(out, `[{"key":"lease","valueBytes":2,"version":`) || !strings.Contains(out, `"expires":`) {
		t.Errorf("list --prefix l --json: %q", out)
	}
	if out := expectRun(t, 0, "", "", cmd("state", "list", "plugin/kit-go", "--limit", "1", "--json")...); strings.Count(out, `"key`) != 1 {
		t.Errorf("list --limit 1: %q", out)
	}
	if out := expectRun(t, 0, "", "", cmd("state", "list", "plugin/nothing", "--json")...); out != "[]\n" {
		t.Errorf("list of an empty namespace: %q", out)
	}
	expectRun(t, 0, "41", "", cmd("state", "get", "plugin/kit-go", "count")...)
	var bin admin.StateItem
	if err := json.Unmarshal([]byte(expectRun(t, 0, "", "", cmd("state", "get", "plugin/kit-go", "/wE=", "--base64-key", "--json")...)), &bin); err != nil || string(bin.ValueBase64) != "\x00\xfe" || bin.Version == 0 {
		t.Errorf("get --base64-key --json: %v %+v", err, bin)
	}

	// Writes: one commit each, conditions checked.
	var got admin.StateItem
	if err := json.Unmarshal([]byte(expectRun(t, 0, "", "", cmd("state", "get", "plugin/kit-go", "count", "--json")...)), &got); err != nil {
		t.Fatal(err)
	}
	v := strconv.FormatUint(got.Version, 10)
	expectRun(t, 1, "", `condition failed on key "count" in namespace plugin/kit-go: the version is `+v+", not 1; nothing was written",
		cmd("state", "set", "plugin/kit-go", "count", "42", "--if-version", "1")...)
	out = expectRun(t, 0, `set "count" in plugin/kit-go: version `, "", cmd("state", "set", "plugin/kit-go", "count", "42", "--if-version", v)...)
	expectRun(t, 1, "", `the key exists; nothing was written`, cmd("state", "set", "plugin/kit-go", "lease", "you", "--if-absent")...)
	value := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(value, []byte("from\na file"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, 0, "", "", cmd("state", "set", "shared/devices", "d2", "-f", value, "--ttl", "1h")...)
	expectRun(t, 0, `deleted "d1" from shared/devices`, "", cmd("state", "delete", "shared/devices", "d1")...)
	expectRun(t, 0, `no key "d1" in shared/devices: nothing to delete`, "", cmd("state", "delete", "shared/devices", "d1")...)
	expectRun(t, 1, "", `the key does not exist (expected version 5); nothing was written`, cmd("state", "delete", "shared/devices", "d1", "--if-version", "5")...)
	if s := readState(t, dir, "shared/devices"); len(s) != 1 || s["d2"] != "from\na file" {
		t.Errorf("shared/devices after the writes: %q", s)
	}
	if s := readState(t, dir, "plugin/kit-go"); s["count"] != "42" || s["lease"] != "me" {
		t.Errorf("plugin/kit-go after the writes: %q (%s)", s, out)
	}

	// Bad input, flag by flag.
	other := t.TempDir()
	for _, c := range []struct {
		code int
		want string
		args []string
	}{
		{base.ExitUsage, `namespace "kit-go" is none of the forms the state store has: a plugin's, plugin/NAME, a shared one an operator file grants, shared/NAME, or the Azure IoT Operations protocol's own keys, aio`, cmd("state", "get", "kit-go", "k")},
		{base.ExitUsage, `namespace "plugin/.x": invalid plugin name ".x"`, cmd("state", "get", "plugin/.x", "k")},
		{base.ExitUsage, `shared namespace "a/b"`, cmd("state", "list", "shared/a/b")},
		{base.ExitUsage, "name the namespace: cmdhost state get NAMESPACE KEY", cmd("state", "get")},
		{base.ExitUsage, "0 arguments after the namespace: cmdhost state get NAMESPACE KEY", cmd("state", "get", "plugin/kit-go")},
		{base.ExitUsage, "set needs a value", cmd("state", "set", "plugin/kit-go", "k")},
		{base.ExitUsage, "set takes the value as VALUE or -f FILE, not both", cmd("state", "set", "plugin/kit-go", "k", "v", "-f", value)},
		{base.ExitUsage, "-f: open /nonexistent", cmd("state", "set", "plugin/kit-go", "k", "-f", "/nonexistent")},
		{base.ExitUsage, "--ttl must be positive", cmd("state", "set", "plugin/kit-go", "k", "v", "--ttl", "0s")},
		{base.ExitUsage, "--ttl must be positive", cmd("state", "set", "plugin/kit-go", "k", "v", "--ttl", "-1m")},
		{base.ExitUsage, "--ttl 5: not a duration", cmd("state", "set", "plugin/kit-go", "k", "v", "--ttl", "5")},
		{base.ExitUsage, "--if-absent and --if-version", cmd("state", "set", "plugin/kit-go", "k", "v", "--if-absent", "--if-version", "3")},
		{base.ExitUsage, "--if-version", cmd("state", "delete", "plugin/kit-go", "k", "--if-version", "x")},
		{base.ExitUsage, "--state-namespace-keys must be positive", cmd("state", "set", "plugin/kit-go", "k", "v", "--state-namespace-keys", "0")},
		{base.ExitUsage, "--limit must not be negative", cmd("state", "list", "plugin/kit-go", "--limit", "-1")},
		{base.ExitUsage, `--base64-key: KEY "%%%" is not base64`, cmd("state", "get", "plugin/kit-go", "%%%", "--base64-key")},
		{base.ExitUsage, "namespaces takes no argument", cmd("state", "namespaces", "plugin/kit-go")},
		{base.ExitUsage, "say where the state store is: --state-dir DIR or --plugins DIR", []string{"state", "get", "plugin/kit-go", "count"}},
		{base.ExitUsage, "give one way", cmd("state", "get", "plugin/kit-go", "count", "--executor", "h")},
		{base.ExitUsage, "give one of them", cmd("state", "get", "plugin/kit-go", "count", "--plugins", other)},
		{base.ExitUsage, "state folder /nonexistent: not a folder", []string{"state", "list", "--state-dir", "/nonexistent"}},
		{base.ExitUsage, "holds no state store (no Pebble MANIFEST)", []string{"state", "list", "--state-dir", other}},
		{base.ExitUsage, "state folder " + other + ".state: not a folder", []string{"state", "list", "--plugins", other}},
		{base.ExitFailed, `no key "nothing" in namespace plugin/kit-go`, cmd("state", "get", "plugin/kit-go", "nothing")},
		{base.ExitFailed, "a key of 2000 bytes is over the bound of 1024; nothing was written", cmd("state", "set", "plugin/kit-go", strings.Repeat("k", 2000), "v")},
		{base.ExitUsage, `unknown command "state lst": did you mean "state list"?`, []string{"state", "lst"}},
	} {
		if _, errOut, code := clitest.Run(t, c.args...); code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("cmdhost %s: exit %d, %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}

	// A folder a process holds (as a running host does) is refused,
	// naming the way through the host.
	d, err := state.OpenDisk(state.DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	expectRun(t, base.ExitFailed, "", "is held by a running host (cmdhost serve): go through it with --executor ID", cmd("state", "list")...)
}

// --plugins opens the folder serve keeps beside the plugins folder, and
// bounds a plugin's namespace by its operator file, as its calls are.
func TestStateOfflinePluginsFolder(t *testing.T) {
	plugins := t.TempDir()
	dir := stateFolder(t)
	if err := os.Rename(dir, plugins+".state"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "tiny.json"), []byte(`{"state": {"maxKeys": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	expectRun(t, 0, "", "", "state", "set", "--plugin", "tiny", "a", "1", "--plugins", plugins)
	expectRun(t, 1, "", "namespace plugin/tiny is full: its keys would pass 1", "state", "set", "--plugin", "tiny", "b", "2", "--plugins", plugins)
	expectRun(t, 0, "", "", "state", "set", "--plugin", "other", "b", "2", "--plugins", plugins)
	// serve's bound of a namespace, for the plugins without their own.
	expectRun(t, 1, "", "namespace plugin/other is full: its keys would pass 1", "state", "set", "--plugin", "other", "c", "3", "--plugins", plugins, "--state-namespace-keys", "1")
}

// export writes every key as a JSON line, import reads them back: the
// same keys, values and expiry in another namespace; a bad line is
// refused naming it, and nothing is written; an import larger than one
// commit goes in several, each all or none.
func TestStateExportImport(t *testing.T) {
	dir := stateFolder(t, setOp("plugin/kit-go", "a", "1", 0), setOp("plugin/kit-go", "b", "two\nlines", time.Hour),
		state.Op{Kind: state.OpSet, NS: "plugin/kit-go", Key: []byte{0xff}, Value: []byte{0xfe, 0}})
	exported, errOut, code := clitest.Run(t, "state", "export", "plugin/kit-go", "--state-dir", dir)
	if code != 0 || strings.Count(exported, "\n") != 3 || !strings.Contains(errOut, "exported 3 keys of plugin/kit-go") {
		t.Fatalf("export: %q %q %d", exported, errOut, code)
	}
	file := filepath.Join(t.TempDir(), "kit.jsonl")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, 0, "imported 3 keys into shared/copy in 1 commit (0 expired, left out)", "", "state", "import", "shared/copy", "-f", file, "--state-dir", dir)
	again, _, _ := clitest.Run(t, "state", "export", "shared/copy", "--state-dir", dir)
	items := func(jsonl string) []admin.StateItem {
		t.Helper()
		var out []admin.StateItem
		for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
			var it admin.StateItem
			if err := json.Unmarshal([]byte(line), &it); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, it)
		}
		return out
	}
	before, after := items(exported), items(again)
	if len(before) != 3 || len(after) != 3 {
		t.Fatalf("export, import, export: %d then %d keys", len(before), len(after))
	}
	for i := range before {
		b, a := before[i], after[i]
		bk, _ := b.StateKey.Bytes()
		ak, _ := a.StateKey.Bytes()
		bv, _ := b.StateValue.Bytes()
		av, _ := a.StateValue.Bytes()
		if string(bk) != string(ak) || string(bv) != string(av) || b.Expires.IsZero() != a.Expires.IsZero() || a.Expires.Sub(b.Expires).Abs() > time.Minute {
			t.Errorf("key %d: exported %+v, then %+v", i, b, a)
		}
	}

	// A bad line: named, and nothing written.
	bad := exported + `{"key":"c","value":"3"}` + "\n" + `{"key":"d","valu":"4"}` + "\n"
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, base.ExitFailed, "", `line 5: not a key as export writes it, {"key":"K","value":"V"}: json: unknown field "valu"; nothing was imported`,
		"state", "import", "shared/bad", "-f", file, "--state-dir", dir)
	for _, c := range []struct{ input, want string }{
		{"{\"key\":\"a\",\"value\":\"1\"}\nnot json\n", "line 2: not a key as export writes it"},
		{"{\"value\":\"1\"}\n", `line 1: no key: give "key" (text) or "keyBase64"`},
		{"{\"key\":\"a\"}\n", `line 1: no value: give "value" (text) or "valueBase64"`},
		{"{\"key\":\"a\",\"value\":\"1\"}\n\n{\"key\":\"a\",\"value\":\"2\"}\n", `line 3: key "a" again (line 1 has it)`},
		{"{\"key\":\"a\",\"value\":\"1\"} {\"key\":\"b\",\"value\":\"2\"}\n", "line 1: more than one JSON object: one key a line"},
		{fmt.Sprintf("{\"key\":%q,\"value\":\"1\"}\n", strings.Repeat("k", 1025)), "line 1: a key of 1025 bytes, over the bound of 1024"},
		{fmt.Sprintf("{\"key\":\"a\",\"value\":%q}\n", strings.Repeat("v", 1<<20+1)), "line 1: a value of 1048577 bytes, over the bound of 1048576"},
	} {
		if err := os.WriteFile(file, []byte(c.input), 0o600); err != nil {
			t.Fatal(err)
		}
		expectRun(t, base.ExitFailed, "", c.want, "state", "import", "shared/bad", "-f", file, "--state-dir", dir)
	}
	if s := readState(t, dir, "shared/bad"); len(s) != 0 {
		t.Errorf("refused imports wrote %q", s)
	}

	// 2,500 keys: three commits; with the namespace bounded to 1,500
	// keys, the first applies and the second is refused whole.
	var lines strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&lines, "{\"key\":\"k%04d\",\"value\":\"%d\"}\n", i, i)
	}
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	expectRun(t, 0, "imported 2500 keys into shared/many in 3 commits", "", "state", "import", "shared/many", "-f", file, "--state-dir", dir)
	expectRun(t, base.ExitFailed, "", "lines 1001 to 2000 not imported, nothing of them written: namespace shared/few is full: its keys would pass 1500",
		"state", "import", "shared/few", "-f", file, "--state-dir", dir, "--state-namespace-keys", "1500")
	if s := readState(t, dir, "shared/few"); len(s) != 1000 || s["k0999"] != "999" {
		t.Errorf("the import refused at its second commit kept %d keys, want the first commit's 1000", len(s))
	}
}
