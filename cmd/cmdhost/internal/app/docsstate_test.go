package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/state"
)

// stateDoc runs docs/state.md's `cmdhost state` lines in order, offline,
// on a plugins folder of its own whose state store serve made (here:
// state.OpenDisk), /srv/plugins in the doc standing for it: each must
// exit as its comment says (exit N; else 0) and print what it says (→
// TEXT: stdout holds TEXT). A line through a running host (--executor)
// has its flags checked.
type stateDoc struct{ dir, plugins string }

func newStateDoc(t *testing.T) *stateDoc {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := state.OpenDisk(state.DiskConfig{Dir: base.DefaultStateDir(plugins)})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	return &stateDoc{dir: dir, plugins: plugins}
}

func (s *stateDoc) run(t *testing.T, c docCommand) {
	t.Helper()
	words := strings.Fields(c.text)
	if len(words) < 3 || words[1] != "state" {
		t.Fatalf("%s: %q is not a cmdhost state line", c.where, c.text)
	}
	if strings.Contains(c.text, "--executor") {
		var flags []string
		for _, w := range words {
			if strings.HasPrefix(w, "--") {
				flags = append(flags, w)
			}
		}
		checkFlags(t, words[1:3], flags)
		return
	}
	line := strings.ReplaceAll(c.text, "/srv/plugins", s.plugins)
	line = strconv.Quote(clitest.Binary) + " --cache-dir " + strconv.Quote(clitest.CLICache()) + strings.TrimPrefix(line, "cmdhost")
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = s.dir
	stdout, stderr, code := runExec(t, cmd)
	want, wantOut := 0, ""
	if m := regexp.MustCompile(`^exit (\d+)$`).FindStringSubmatch(c.comment); m != nil {
		want, _ = strconv.Atoi(m[1])
	} else if out, ok := strings.CutPrefix(c.comment, "→ "); ok {
		wantOut = out
	} else if c.comment != "" {
		t.Fatalf("%s: the comment %q says nothing this test can check: write \"→ OUTPUT\" or \"exit N\"", c.where, c.comment)
	}
	if code != want || !strings.Contains(stdout, wantOut) {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q; the doc says %q", c.where, c.text, code, stdout, stderr, c.comment)
	}
}

// runExec runs cmd and returns its stdout, stderr and exit status.
func runExec(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}
