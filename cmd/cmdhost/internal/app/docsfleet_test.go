package app

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/oci/ocitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// fleetDoc is the file of the fleet walk TestDocsFleet runs.
const fleetDoc = "fleet.md"

// fleetCommands returns the cmdhost lines of docs/fleet.md, in order.
func fleetCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	for _, c := range docCommands(t, filepath.Join(clitest.RepoRoot(t), "docs", fleetDoc)) {
		if strings.HasPrefix(c.text, "cmdhost ") {
			out = append(out, c)
		}
	}
	return out
}

// shellWords splits a command line into words as sh does for the lines
// the docs show: spaces apart, single quotes kept together and removed.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// fleetDocFlags checks a cmdhost line of docs/fleet.md: every flag it shows
// is its command's (TestDocsFleet runs it).
func fleetDocFlags(t *testing.T, c docCommand) {
	t.Helper()
	words := shellWords(c.text)
	path := words[1:2]
	if words[1] == "plugin" && len(words) > 2 {
		path = words[1:3]
	}
	var flags []string
	for _, w := range words {
		if strings.HasPrefix(w, "--") {
			flags = append(flags, w)
		}
	}
	checkFlags(t, path, flags)
}

// TestDocsFleet runs docs/fleet.md's walk: its serve lines as three
// hosts on a mosquitto of the test's, then each command in order, with
// the doc's names (broker, registry, folders, token and password files,
// modules) replaced by the test's, on a registry of the test's too; each command must print what its comment says (→ TEXT: stdout
// holds TEXT) and exit as it says (exit N; else 0).
func TestDocsFleet(t *testing.T) {
	testkit.Needs(t, testkit.Mosquitto)
	testkit.Needs(t, testkit.Plugins)
	cmds := fleetCommands(t)
	if len(cmds) < 6 {
		t.Fatalf("docs/%s shows %d cmdhost commands; want the walk's serve lines and commands", fleetDoc, len(cmds))
	}
	tmp := t.TempDir()
	names := recipeNames{"mqtt://broker.example:1883": brokertest.StartMosquitto(t).String(),
		"/etc/cmdhost/admin-token": filepath.Join(tmp, "admin-token")}
	if err := os.WriteFile(names["/etc/cmdhost/admin-token"], []byte("docs-fleet-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wat, err := os.ReadFile(filepath.Join(clitest.Plugins, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for file, bin := range map[string][]byte{"greet.wasm": wat, "hello.wasm": wat, "greet-v2.wasm": append(append([]byte(nil), wat...), 0, 4, 2, 'v', '2', 'x')} {
		names[file] = filepath.Join(tmp, file)
		if err := os.WriteFile(names[file], bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names["/etc/cmdhost/signing.pem"] = filepath.Join(tmp, "signing.pem")
	names["/etc/cmdhost/signing.pem.pub"] = filepath.Join(tmp, "signing.pem.pub")
	reg := ocitest.Start(t)
	names["registry.example:5000"] = reg.Host
	names["ci"] = reg.User
	names["/etc/cmdhost/registry-password"] = reg.PasswordFile
	for i := 1; i <= 2; i++ {
		names["/srv/edge-"+strconv.Itoa(i)] = t.TempDir()
	}
	names["/srv/core-1"] = t.TempDir()
	for _, c := range cmds {
		words := shellWords(names.apply(c.text))
		if strings.Contains(c.text, "registry.example") {
			words = append(words, "--plain-http") // the test's registry has no TLS
		}
		if words[1] == "serve" {
			dir := ""
			for i, w := range words {
				if w == "--plugins" && i+1 < len(words) {
					dir = words[i+1]
				}
			}
			clitest.StartServeIn(t, dir, nil, words[2:]...)
			continue
		}
		want, code := c.comment, 0
		if rest, ok := strings.CutPrefix(want, "exit "); ok {
			n, after, _ := strings.Cut(rest, " ")
			if code, err = strconv.Atoi(n); err != nil {
				t.Fatalf("%s: comment %q: exit what?", c.where, c.comment)
			}
			want = after
		}
		want = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(want), "→"))
		out, errOut, got := clitest.Run(t, words[1:]...)
		if got != code || !strings.Contains(out, want) {
			t.Errorf("%s: %s\nexit %d, stdout %q, stderr %q; want exit %d and %q", c.where, c.text, got, out, errOut, code, want)
		}
	}
}
