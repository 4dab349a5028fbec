package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A new version refused for a clash while an older one serves is loaded
// once the command it wanted is freed, as a brand-new refused plugin is,
// and its clash error goes from the status (issue 27, item 2: the old
// version kept serving for good, with the stale error).
func TestRefusedReloadIsRetriedWhenTheCommandIsFreed(t *testing.T) {
	// How b's new version comes and how the command is freed: Reload,
	// then Remove (plugin reload, plugin remove); or under a watching
	// manager, the file replaced, then a.wasm deleted (only a.wasm's
	// event: b's file is not touched again).
	type way struct {
		watch bool
		free  func(t *testing.T, m *Manager, dir string)
	}
	ways := map[string]way{
		"Remove": {false, func(t *testing.T, m *Manager, dir string) {
			if err := m.Remove(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
		}},
		"file deleted": {true, func(t *testing.T, m *Manager, dir string) {
			if err := os.Remove(filepath.Join(dir, "a.wasm")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for how, w := range ways {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			watEcho := readPlugin(t, "wat-echo")
			testkit.Install(t, dir, "a.wasm", watEcho)                  // serves wat-echo
			testkit.Install(t, dir, "b.wasm", readPlugin(t, "counter")) // b's old version: counter
			m, _ := newManager(t, dir, 10*time.Millisecond)
			ctx := context.Background()
			if w.watch {
				watch(t, m)
				testkit.WaitFor(t, "a and b served", func() bool { return len(m.Commands()) == 2 })
			} else if errs := m.LoadAll(ctx); len(errs) != 0 {
				t.Fatal(errs)
			}

			// b's new version declares wat-echo: refused, the old one keeps serving.
			newB := variant(watEcho, "b")
			testkit.Install(t, dir, "b.wasm", newB)
			if w.watch {
				testkit.WaitFor(t, "b's new version refused", func() bool {
					s, _ := status(m, "b")
					return s.RefusedDigest == digest(newB)
				})
			} else if err := m.Reload(ctx, "b"); err == nil || !strings.Contains(err.Error(), "already served by plugin a") {
				t.Fatalf("Reload(b) with a clashing new version: %v", err)
			}
			s, _ := status(m, "b")
			if s.State != StateServing || s.RefusedDigest != digest(newB) || !strings.Contains(s.LastError, "already served by plugin a") {
				t.Fatalf("Status(b) after the refusal = %+v; want the old version serving, the new one's digest refused", s)
			}

			w.free(t, m, dir)
			testkit.WaitFor(t, "b's new version to be retried and serve wat-echo", func() bool {
				p, ok := m.Lookup("wat-echo")
				return ok && p.Name() == "b"
			})
			mustEcho(t, m, "wat-echo")
			s, _ = status(m, "b")
			if s.Digest != digest(newB) || s.LastError != "" || s.RefusedDigest != "" || s.Reloads != 1 {
				t.Errorf("Status(b) after the retry = %+v; want the new version serving, no error left", s)
			}
			if _, ok := m.Lookup("counter"); ok {
				t.Errorf("counter still served after b's new version (without it) was loaded")
			}
		})
	}
}

// A refused new version whose file goes back to the content serving
// leaves no stale error (plugin list showed it for good).
func TestRefusedReloadRevertedClearsTheError(t *testing.T) {
	dir := t.TempDir()
	watEcho := readPlugin(t, "wat-echo")
	counter := readPlugin(t, "counter")
	testkit.Install(t, dir, "a.wasm", watEcho)
	testkit.Install(t, dir, "b.wasm", counter)
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	testkit.Install(t, dir, "b.wasm", variant(watEcho, "b"))
	if errs := m.LoadAll(ctx); len(errs) != 1 {
		t.Fatalf("LoadAll: %v, want b's clash", errs)
	}
	testkit.Install(t, dir, "b.wasm", counter) // back to what serves
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	if s, _ := status(m, "b"); s.State != StateServing || s.LastError != "" || s.RefusedDigest != "" || s.Digest != digest(counter) {
		t.Errorf("Status(b) = %+v; want serving the file's content with no error", s)
	}
}
