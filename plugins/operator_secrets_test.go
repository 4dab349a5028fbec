package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// writeSecret writes a secret file of content into dir, closed to others.
func writeSecret(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOperatorSecrets: a secret file the operator file names reaches the
// guest as a config value (its final line break dropped), beside
// "config"; its content shows in no log, no status and no printing of
// the operator file; a rotated secret is read again at a reload.
func TestOperatorSecrets(t *testing.T) {
	const value = "sk-live-7f3a9c" // what must never show
	dir, secrets := t.TempDir(), t.TempDir()
	key := writeSecret(t, secrets, "api-key", value+"\n")
	testkit.Install(t, dir, "probe.wasm", readPlugin(t, "probe"))
	opFile := `{"config": {"greeting": "hi"}, "secrets": {"apiKey": "` + key + `"}}`
	writeOperator(t, dir, "probe", opFile)
	m, logs := newManager(t, dir, 50*time.Millisecond)
	if errs := m.LoadAll(context.Background()); len(errs) != 0 {
		t.Fatal(errs)
	}
	for payload, want := range map[string]string{"apiKey": value, "greeting": "hi"} {
		resp, err := call(m, "probe-config", payload)
		if err != nil || resp.AppError || string(resp.Payload) != want {
			t.Errorf("probe-config %s = %v, %+v; want %q", payload, err, resp, want)
		}
	}

	op, err := ReadOperator(filepath.Join(dir, "probe.json"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := status(m, "probe")
	for what, text := range map[string]string{
		"%v": fmt.Sprintf("%v", op), "%+v": fmt.Sprintf("%+v", op), "%#v": fmt.Sprintf("%#v", op), "json": string(js),
		"status": fmt.Sprintf("%+v", s), "log": logs.String(),
	} {
		if strings.Contains(text, value) {
			t.Errorf("the secret shows in the operator file's %s: %s", what, text)
		}
	}
	if !strings.Contains(fmt.Sprintf("%+v", op), "secret from "+key) || !strings.Contains(string(js), key) {
		t.Errorf("the operator file's printing does not name the secret file: %+v / %s", op, js)
	}
	if names := op.SecretNames(); len(names) != 1 || names[0] != "apiKey" {
		t.Errorf("SecretNames = %v", names)
	}

	// Rotated: the file is read again at the plugin's next load.
	writeSecret(t, secrets, "api-key", "sk-live-rotated")
	if err := m.Reload(context.Background(), "probe"); err != nil {
		t.Fatal(err)
	}
	if resp, err := call(m, "probe-config", "apiKey"); err != nil || string(resp.Payload) != "sk-live-rotated" {
		t.Errorf("after the rotation and a reload: %v, %+v", err, resp)
	}
}

// TestOperatorSecretMissing: a plugin whose secret file is missing is
// not served, its error naming the file; once the file is there, a
// reload serves it.
func TestOperatorSecretMissing(t *testing.T) {
	dir, secrets := t.TempDir(), t.TempDir()
	key := filepath.Join(secrets, "api-key")
	testkit.Install(t, dir, "probe.wasm", readPlugin(t, "probe"))
	writeOperator(t, dir, "probe", `{"secrets": {"apiKey": "`+key+`"}}`)
	m, _ := newManager(t, dir, 50*time.Millisecond)
	errs := m.LoadAll(context.Background())
	want := `plugin probe: probe.json: "secrets.apiKey": the secret file ` + key + ` does not exist: create it (the host reads it at load), or fix the path`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("LoadAll = %v, want %s", errs, want)
	}
	if s, _ := status(m, "probe"); s.State != StateFailed || !strings.Contains(s.LastError, key) {
		t.Errorf("Status = %+v", s)
	}
	writeSecret(t, secrets, "api-key", "k")
	if err := m.Reload(context.Background(), "probe"); err != nil {
		t.Fatal(err)
	}
	if resp, err := call(m, "probe-config", "apiKey"); err != nil || string(resp.Payload) != "k" {
		t.Errorf("after the file was made: %v, %+v", err, resp)
	}
}

// TestOperatorSecretErrors: what a secret file must be, each refusal
// naming the field, the file and the fix, never the content.
func TestOperatorSecretErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeSecret(t, dir, "good", "k")
	empty := writeSecret(t, dir, "empty", "\n")
	big := writeSecret(t, dir, "big", strings.Repeat("x", MaxSecretBytes+1))
	binary := writeSecret(t, dir, "binary", "k\xff")
	closed := writeSecret(t, dir, "closed", "top-secret-content")
	if err := os.Chmod(closed, 0); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		`{"secrets": {"apiKey": "api-key"}}`:                                 `"secrets.apiKey": "api-key" is not an absolute path: write the secret file's full path, e.g. "/etc/cmdhost/secrets/apiKey"`,
		`{"secrets": {"apiKey": "` + dir + `/none"}}`:                        `"secrets.apiKey": the secret file ` + dir + `/none does not exist`,
		`{"secrets": {"apiKey": "` + empty + `"}}`:                           `the secret file ` + empty + ` is empty: write the secret into it`,
		`{"secrets": {"apiKey": "` + big + `"}}`:                             `is 65537 bytes, more than the limit of 65536 (64 KiB)`,
		`{"secrets": {"apiKey": "` + binary + `"}}`:                          `not UTF-8 text`,
		`{"secrets": {"apiKey": "` + dir + `"}}`:                             `the secret file ` + dir + ` is not a regular file`,
		`{"secrets": {"apiKey": "` + fifo + `"}}`:                            `the secret file ` + fifo + ` is not a regular file`,
		`{"secrets": {"": "` + good + `"}}`:                                  `"secrets.": is not a name`,
		`{"secrets": {"apiKey": 7}}`:                                         `"secrets.apiKey": is a number: write a string`,
		`{"secrets": ["` + good + `"]}`:                                      `"secrets": is a list: write an object`,
		`{"config": {"apiKey": "x"}, "secrets": {"apiKey": "` + good + `"}}`: `"secrets.apiKey": is also in "config": give the value one place`,
		`{"secrets": {"apiKey": "` + good + `"}, "config": {"apiKey": "x"}}`: `"secrets.apiKey": is also in "config"`,
		`{"secret": {"apiKey": "` + good + `"}}`:                             `"secret": unknown field`,
		`{"secrets": {"apiKey": "` + closed + `"}}`:                          `the secret file ` + closed + ` cannot be read: permission denied: make it readable by the user the host runs as`,
	}
	for file, want := range cases {
		if strings.Contains(file, closed) && os.Geteuid() == 0 {
			continue // root reads a file of mode 0
		}
		_, err := ParseOperator("pay.json", []byte(file))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "pay.json: ") {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "top-secret-content") {
			t.Errorf("%s: the error shows the content: %v", file, err)
		}
	}
}
