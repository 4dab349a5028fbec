package plugincmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/oci/ocitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestPullAndReferences (issue 39, on a registry the test starts):
// plugin pull writes a module and its signature as pushed, checked with
// --trust and against the digest an operator file beside the output
// pins, nothing written when either refuses it; inspect, validate and
// call take oci:// references; install --plugins into a folder that is
// not there says so before it pulls anything.
func TestPullAndReferences(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	reg := ocitest.Start(t)
	tmp := t.TempDir()
	creds := []string{"--registry-user", reg.User, "--registry-password-file", reg.PasswordFile, "--plain-http"}
	with := func(args ...string) []string { return append(args, creds...) }
	key, other := filepath.Join(tmp, "k.pem"), filepath.Join(tmp, "other.pem")
	for _, k := range []string{key, other} {
		if out, errOut, code := clitest.Run(t, "plugin", "keygen", "--out", k); code != 0 {
			t.Fatalf("keygen: %q %q %d", out, errOut, code)
		}
	}
	signed := filepath.Join(tmp, "greet.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"), tmp, "greet.wasm")
	if out, errOut, code := clitest.Run(t, "plugin", "sign", signed, "--key", key); code != 0 {
		t.Fatalf("sign: %q %q %d", out, errOut, code)
	}
	ref, unsigned := "oci://"+reg.Host+"/plugins/greet:1", "oci://"+reg.Host+"/plugins/greet:unsigned"
	if out, errOut, code := clitest.Run(t, with("plugin", "push", signed, ref)...); code != 0 {
		t.Fatalf("push signed: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, with("plugin", "push", filepath.Join(clitest.Plugins, "wat-echo.wasm"), unsigned)...); code != 0 {
		t.Fatalf("push unsigned: %q %q %d", out, errOut, code)
	}
	module, _ := os.ReadFile(signed)
	sig, _ := os.ReadFile(signed + ".sig")

	dir := t.TempDir()
	dst := filepath.Join(dir, "greet.wasm")
	out, errOut, code := clitest.Run(t, with("plugin", "pull", ref, "-o", dst, "--trust", key+".pub")...)
	if code != 0 || !strings.Contains(out, "pulled "+ref+" to "+dst) || !strings.Contains(out, "by a key of --trust") {
		t.Fatalf("pull: %q %q %d", out, errOut, code)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, module) {
		t.Error("the module pulled is not the one pushed")
	}
	if b, _ := os.ReadFile(dst + ".sig"); !bytes.Equal(b, sig) {
		t.Error("the signature pulled is not the one pushed")
	}

	// Refused: nothing written.
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"another key", []string{ref, "--trust", other + ".pub"}, "not written: the signature of"},
		{"unsigned", []string{unsigned, "--trust", key + ".pub"}, "is not signed"},
		{"pinned", []string{ref}, "not written: plugin greet: the module is sha256:"},
	} {
		fresh := t.TempDir()
		if c.name == "pinned" {
			pin := `{"digest": "sha256:` + strings.Repeat("0", 64) + `"}`
			if err := os.WriteFile(filepath.Join(fresh, "greet.json"), []byte(pin), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, errOut, code := clitest.Run(t, with(append([]string{"plugin", "pull", "-o", filepath.Join(fresh, "greet.wasm")}, c.args...)...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("pull, %s: %q %q %d, want exit 1 and %q", c.name, out, errOut, code, c.want)
		}
		if _, err := os.Stat(filepath.Join(fresh, "greet.wasm")); err == nil {
			t.Errorf("pull, %s: the module was written", c.name)
		}
	}

	out, errOut, code = clitest.Run(t, with("plugin", "inspect", ref)...)
	if code != 0 || !strings.Contains(out, "file:         "+ref) || !strings.Contains(out, "wat-echo") {
		t.Errorf("inspect %s: %q %q %d", ref, out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, with("plugin", "validate", ref)...)
	if code != 0 || out != ref+": ok: 1 command (wat-echo)\n" {
		t.Errorf("validate %s: %q %q %d", ref, out, errOut, code)
	}
	out, errOut, code = clitest.Run(t, with("call", ref, "wat-echo", "-d", "hi")...)
	if code != 0 || out != "hi" {
		t.Errorf("call %s: %q %q %d", ref, out, errOut, code)
	}

	missing := filepath.Join(tmp, "missing")
	out, errOut, code = clitest.Run(t, with("plugin", "install", ref, "--plugins", missing)...)
	if code != 2 || !strings.Contains(errOut, "--plugins "+missing+": not a directory") || strings.Contains(errOut, "pulled") {
		t.Errorf("install into a folder that is not there: %q %q %d, want exit 2 before any pull", out, errOut, code)
	}
}
