package devcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// TestNewGoDependsOnSDKAlone: a Go project made by cmdhost new, with the
// SDK it carries or against a source tree (--cmdhost-src), depends on the
// abi and sdk modules and nothing else: none of the host's dependencies
// (wazero, paho, go-redis …) in its module graph or go.sum, and it tidies
// and builds with no module proxy.
func TestNewGoDependsOnSDKAlone(t *testing.T) {
	src := clitest.RepoRoot(t)
	// No proxy, no workspace, and -mod=mod: what the go command would add
	// to go.mod or go.sum, it may, and the test sees it.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	goIn := func(t *testing.T, dir string, extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(env, extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	for _, c := range []struct {
		name string
		args []string
		abi  string // where go.mod's replace points
		sdk  string
	}{
		{"carried", nil, "./cmdhost/abi", "./cmdhost/sdk"},
		{"source tree", []string{"--cmdhost-src", src}, filepath.Join(src, "abi"), filepath.Join(src, "sdk")},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			if out, errOut, code := clitest.Run(t, append([]string{"new", "alone", "--dir", tmp}, c.args...)...); code != 0 {
				t.Fatalf("new: stdout %q, stderr %q, status %d", out, errOut, code)
			}
			proj := filepath.Join(tmp, "alone")
			gomod, err := os.ReadFile(filepath.Join(proj, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}

			got := strings.Split(strings.TrimSpace(goIn(t, proj, nil, "list", "-m", "all")), "\n")
			want := []string{
				"alone",
				"github.com/cmdhost/cmdhost/abi " + placeholderVersion + " => " + c.abi,
				"github.com/cmdhost/cmdhost/sdk " + placeholderVersion + " => " + c.sdk,
			}
			if !slices.Equal(got, want) {
				t.Errorf("go list -m all:\n%s\nwant only the project, abi and sdk:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			goIn(t, proj, nil, "mod", "tidy")
			if after, _ := os.ReadFile(filepath.Join(proj, "go.mod")); string(after) != string(gomod) {
				t.Errorf("go mod tidy changed go.mod:\n%s\nwas:\n%s", after, gomod)
			}
			// abi and sdk are replaced by folders, which go.sum does not
			// list: any line would be a module from elsewhere.
			if sum, err := os.ReadFile(filepath.Join(proj, "go.sum")); err == nil && len(sum) > 0 {
				t.Errorf("go.sum is not empty (wazero, paho … of the host's module?):\n%s", sum)
			}

			if testing.Short() {
				return
			}
			goIn(t, proj, []string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-o", "alone.wasm", ".")
			goIn(t, proj, nil, "vet", "./...")
		})
	}
}
