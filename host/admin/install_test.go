package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

func readTestPlugin(t *testing.T, name string) []byte {
	t.Helper()
	testkit.Needs(t, testkit.Plugins)
	b, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
	if err != nil {
		t.Fatalf("%v (run `make plugins`)", err)
	}
	return b
}

// withTag returns module with a custom section appended: another digest
// for the same code.
func withTag(module []byte, tag string) []byte {
	out := append([]byte(nil), module...)
	out = append(out, 0, byte(1+len(tag)+1), byte(len(tag)))
	return append(append(out, tag...), 'x')
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestClientInstallRollbackAndAudit: on a host whose broker takes
// packets of 64 KiB, a module of megabytes installs in chunks and is
// served, the version it replaced kept; a module whose command another
// plugin serves is refused with the host's reason and the folder keeps
// what served; rollback serves the kept version; without the token
// install is forbidden. Each is an admin event on the events topic,
// naming who asked, the digest and the verdict.
func TestClientInstallRollbackAndAudit(t *testing.T) {
	echo, wat := readTestPlugin(t, "echo"), readTestPlugin(t, "wat-echo")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: dir,
		ExecutorID: "installer",
		CacheDir:   testkit.CacheDir(),
		Broker:     host.BrokerConfig{MaxRequestBytes: 64 << 10},
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits:     host.LimitsConfig{Pool: 1, MaxExpiry: time.Hour},
		Admin:      host.AdminConfig{Token: "secret"},
		Observe:    host.ObserveConfig{Events: true},
	})
	ctx := context.Background()
	c := dial(t, admin.ClientConfig{Broker: srv.Broker(), ExecutorID: "installer", Token: "secret", Timeout: time.Minute})

	var mu sync.Mutex
	var audit []events.Event
	evCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = c.Events(evCtx, func(payload []byte) {
			var ev events.Event
			if json.Unmarshal(payload, &ev) == nil && ev.Kind == events.KindAdmin {
				mu.Lock()
				audit = append(audit, ev)
				mu.Unlock()
			}
		})
	}()
	// The events' subscription is live once a refusal's event arrives.
	forbidden := dial(t, admin.ClientConfig{Broker: srv.Broker(), ExecutorID: "installer"})
	testkit.WaitFor(t, "the audit of a forbidden install", func() bool {
		_, err := forbidden.Install(ctx, "w", wat, nil)
		var hostErr *admin.HostError
		if !errors.As(err, &hostErr) || hostErr.Status != admin.StatusForbidden {
			t.Fatalf("install without the token: %v, want a HostError 403", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return len(audit) > 0 && audit[0].Verdict == events.VerdictForbidden && audit[0].Op == admin.OpInstall
	})

	v, err := c.Install(ctx, "w", wat, nil)
	if err != nil || !v.Served || v.Digest != sum(wat) || len(v.Commands) != 1 || v.Commands[0] != "wat-echo" || v.ReplicaID.ClientID != "installer" {
		t.Fatalf("install of wat-echo: %+v, %v", v, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "w.wasm")); sum(b) != sum(wat) {
		t.Fatal("w.wasm is not the module installed")
	}

	echo2 := withTag(echo, "v2")
	if len(echo2) < 20*(64<<10) {
		t.Fatalf("echo is %d bytes: too small to need chunks", len(echo2))
	}
	v, err = c.Install(ctx, "echo", echo2, nil)
	if err != nil || !v.Served || v.Digest != sum(echo2) || v.Previous != sum(echo) {
		t.Fatalf("chunked install of a new echo: %+v, %v", v, err)
	}

	// Another plugin declaring echo: refused, nothing written.
	v, err = c.Install(ctx, "echo-copy", echo, nil)
	if err != nil || v.Served || !strings.Contains(v.Reason, "already served by plugin echo") || v.Digest != sum(echo) {
		t.Fatalf("clashing install: %+v, %v; want refused for the clash", v, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "echo-copy.wasm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused module was written into the folder")
	}

	v, err = c.Rollback(ctx, "echo")
	if err != nil || !v.Served || v.Digest != sum(echo) || v.Previous != sum(echo2) {
		t.Fatalf("rollback: %+v, %v", v, err)
	}
	views, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, view := range views {
		if view.Name == "echo" && view.Digest != sum(echo) {
			t.Fatalf("after the rollback echo serves %s", view.Digest)
		}
	}

	want := []struct{ op, plugin, digest, verdict string }{
		{admin.OpInstall, "w", sum(wat), events.VerdictDone},
		{admin.OpInstall, "echo", sum(echo2), events.VerdictDone},
		{admin.OpInstall, "echo-copy", sum(echo), events.VerdictRefused},
		{admin.OpRollback, "echo", sum(echo), events.VerdictDone},
	}
	testkit.WaitFor(t, "the audit of each install", func() bool {
		mu.Lock()
		defer mu.Unlock()
		var done []events.Event
		for _, ev := range audit {
			if ev.Verdict != events.VerdictForbidden {
				done = append(done, ev)
			}
		}
		if len(done) < len(want) {
			return false
		}
		for i, w := range want {
			ev := done[i]
			if ev.Op != w.op || ev.Plugin != w.plugin || ev.Digest != w.digest || ev.Verdict != w.verdict || ev.Invoker == "" {
				t.Fatalf("audit event %d: %+v, want %+v", i, ev, w)
			}
		}
		if !strings.Contains(done[2].Reason, "already served") {
			t.Fatalf("refusal's event gives no reason: %+v", done[2])
		}
		return true
	})
}
