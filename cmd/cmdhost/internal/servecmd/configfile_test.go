package servecmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// writeConfig writes a --config file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cmdhost.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A setting comes from the command line, else the environment, else the
// --config file, else the default. Told by the folder serve refuses.
func TestServeConfigPrecedence(t *testing.T) {
	cfg := writeConfig(t, "plugins: /from/the/file\n")
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, nil, "--plugins /from/the/file: no such folder"},
		{[]string{"CMDHOST_PLUGINS=/from/the/env"}, nil, "--plugins /from/the/env: no such folder"},
		{[]string{"CMDHOST_PLUGINS=/from/the/env"}, []string{"--plugins", "/from/the/flag"}, "--plugins /from/the/flag: no such folder"},
		{[]string{"CMDHOST_CONFIG=" + cfg}, []string{"--config", ""}, "--plugins DIR is required"},
	} {
		args := append([]string{"serve", "--config", cfg, "--listen", clitest.FreeAddr(t)}, c.args...)
		_, errOut, code := clitest.RunEnv(t, c.env, args...)
		if code != base.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("env %v, args %v: %q, exit %d; want %q", c.env, c.args, errOut, code, c.want)
		}
	}
	// CMDHOST_CONFIG names the file too.
	_, errOut, _ := clitest.RunEnv(t, []string{"CMDHOST_CONFIG=" + cfg}, "serve", "--listen", clitest.FreeAddr(t))
	if !strings.Contains(errOut, "--plugins /from/the/file: no such folder") {
		t.Errorf("CMDHOST_CONFIG: %q", errOut)
	}
}

// A bad --config file is refused with the file, line and key, and what to
// write instead.
func TestServeConfigErrors(t *testing.T) {
	for content, want := range map[string]string{
		"exec_timeout: 5s\n":         `cmdhost.yaml:1: exec_timeout: serve has no such setting (did you mean exec-timeout?)`,
		"pool: 2\nexec-timeout: 5\n": `cmdhost.yaml:2: exec-timeout: "5": not a duration: give its unit, e.g. exec-timeout: 5s`,
		"pool: four\n":               `cmdhost.yaml:1: pool: "four": not a whole number`,
		"events: maybe\n":            `cmdhost.yaml:1: events: "maybe": want true or false`,
		"plugins: [a, b]\n":          `cmdhost.yaml:1: plugins: want one value, not a list or mapping`,
		"pool: 2\npool: 3\n":         `cmdhost.yaml:2: pool: given twice`,
		"pool:\n":                    `cmdhost.yaml:1: pool: no value`,
		"- pool\n":                   `cmdhost.yaml: want a mapping of settings`,
		"pool: 2\n  bad indent: x\n": `cmdhost.yaml: not YAML`,
		"config: other.yaml\n":       `config: serve has no such setting`,
	} {
		_, errOut, code := clitest.Run(t, "serve", "--config", writeConfig(t, content), "--listen", clitest.FreeAddr(t))
		if code != base.ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%q: %q, exit %d; want %q", content, errOut, code, want)
		}
	}
	_, errOut, code := clitest.Run(t, "serve", "--config", "/no/such/file.yaml")
	if code != base.ExitUsage || !strings.Contains(errOut, "--config: open /no/such/file.yaml: no such file or directory") {
		t.Errorf("a missing file: %q, exit %d", errOut, code)
	}
}

// The file's settings reach the host: its reply bound here.
func TestServeConfigApplies(t *testing.T) {
	cfg := writeConfig(t, "# serve's settings\nmax-response-bytes: 2000\nlog-level: info\n")
	addr, _ := clitest.StartServe(t, nil, "--config", cfg)
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := clitest.Run(t, "invoke", "echo", "-f", big, "--broker", "mqtt://"+addr, "--executor", "cli-host")
	if code != base.ExitFailed || !strings.Contains(errOut, "exceeds the limit of 2000") {
		t.Fatalf("a 3000-byte echo with max-response-bytes: 2000 in the file: %q, exit %d", errOut, code)
	}
}

// The bash completion script completes commands, subcommands and flags,
// by asking the binary.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, errOut, code := clitest.Run(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: %q, exit %d", errOut, code)
	}
	dir := t.TempDir()
	if err := os.Symlink(clitest.Binary, filepath.Join(dir, "cmdhost")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "completion.bash"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"cmdhost se":              "serve",
		"cmdhost plugin l":        "list",
		"cmdhost serve --max-res": "--max-response-bytes",
		"cmdhost invoke --j":      "--json",
		"cmdhost comp":            "completion",
	} {
		sh := `source completion.bash; COMP_WORDS=(` + line + `); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _cmdhost_complete; echo "${COMPREPLY[*]}"`
		cmd := exec.Command(bash, "-c", sh)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%q completes to %q (%v); want %q", line, out, err, want)
		}
	}
	if _, errOut, code := clitest.Run(t, "completion", "fish"); code != base.ExitUsage || !strings.Contains(errOut, "bash or zsh") {
		t.Errorf("completion fish: %q, exit %d", errOut, code)
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		script, _, _ := clitest.Run(t, "completion", "zsh")
		if out, err := exec.Command(zsh, "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v %s", err, out)
		}
	}
}

// The example file of docs/cli.md is one serve reads: every key a setting,
// every value one its flag takes (the --plugins flag, which wins, stops
// serve before it starts).
func TestDocsConfigExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/cli.md has no ```yaml block")
	}
	_, errOut, code := clitest.Run(t, "serve", "--config", writeConfig(t, string(m[1])), "--plugins", "/no/such/folder")
	if code != base.ExitUsage || !strings.Contains(errOut, "--plugins /no/such/folder: no such folder") {
		t.Fatalf("the docs' example file: %q, exit %d", errOut, code)
	}
}
