package wasm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without grants a guest sees no files and no environment, whatever the
// host process has.
func TestNoGrantsNoFilesNoEnv(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CMDHOST_TEST_SECRET", "leaked")
	p := load(t, "probe", PluginConfig{})
	if caps := p.Capabilities(); len(caps) != 1 || caps[0] != CapFilesystem {
		t.Errorf("probe imports filesystem calls (os.ReadFile): got capabilities %v", caps)
	}
	for _, path := range []string{secret, "/etc/hostname", "/proc/self/environ"} {
		resp := mustCall(t, p, "probe-file", path)
		if !resp.AppError || strings.Contains(string(resp.Payload), "s3cret") {
			t.Errorf("reading %s without a grant: want an error, got %+v", path, resp)
		}
	}
	if got := string(mustCall(t, p, "probe-env", "CMDHOST_TEST_SECRET").Payload); got != "false  0" {
		t.Errorf("env without a grant: guest saw %q, want nothing", got)
	}
}

func TestGrantsGiveWhatTheyName(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("granted"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CMDHOST_TEST_OTHER", "not granted")
	p := load(t, "probe", PluginConfig{Grants: Grants{
		Env:    map[string]string{"REGION": "eu-1"},
		Mounts: []Mount{{HostDir: dir, GuestDir: "/data", ReadOnly: true}},
	}})
	if got := string(mustCall(t, p, "probe-file", "/data/data.txt").Payload); got != "granted" {
		t.Errorf("granted mount: read %q", got)
	}
	if resp := mustCall(t, p, "probe-file", "/etc/hostname"); !resp.AppError {
		t.Errorf("outside the mount: want an error, got %+v", resp)
	}
	if got := string(mustCall(t, p, "probe-env", "REGION").Payload); got != "true eu-1 1" {
		t.Errorf("granted env: guest saw %q", got)
	}
	if got := string(mustCall(t, p, "probe-env", "CMDHOST_TEST_OTHER").Payload); got != "false  1" {
		t.Errorf("ungranted env: guest saw %q", got)
	}
}
