package host_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// A host whose state store cannot write is not ready, and /readyz says
// why; its metrics say so too (cmdhost_state_healthy).
func TestReadyzStateStore(t *testing.T) {
	log := newHoldLog()
	srv := hosttest.Serve(t, host.Config{
		PluginsDir: t.TempDir(),
		ExecutorID: "state-ready",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(log, nil)),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits:     host.LimitsConfig{MaxExpiry: time.Hour, Drain: time.Second},
		Store:      host.StoreConfig{StateDir: t.TempDir()},
		Observe:    host.ObserveConfig{MetricsAddr: "127.0.0.1:0"},
	})
	base := log.metricsBase()
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz of a host serving: %d %q", code, body)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, "\ncmdhost_state_healthy 1\n") {
		t.Errorf("metrics of a host serving: no cmdhost_state_healthy 1")
	}
	if err := host.CloseState(srv); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: state store unavailable: the store is closed") {
		t.Fatalf("/readyz of a host whose state store is closed: %d %q", code, body)
	}
	t.Logf("/readyz: %d %s", code, strings.TrimSpace(body))
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, "\ncmdhost_state_healthy 0\n") {
		t.Errorf("metrics of a host whose state store is closed: no cmdhost_state_healthy 0")
	}
}
