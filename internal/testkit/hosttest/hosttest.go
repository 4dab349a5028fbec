// Package hosttest runs a whole host for tests that need one: Serve
// starts it, waits until it serves (Config.OnServing) and stops it when
// the test ends, so that no test package writes that dance again.
package hosttest

import (
	"context"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Serve starts a host of cfg and returns it once it serves; the host is
// stopped, and Run has returned, when the test ends. It fails the test if
// New fails, or if Run returns or Patience passes before the host serves.
func Serve(tb testing.TB, cfg host.Config) *host.Server {
	tb.Helper()
	serving := make(chan struct{})
	onServing := cfg.OnServing
	cfg.OnServing = func() {
		if onServing != nil {
			onServing()
		}
		close(serving)
	}
	srv, err := host.New(cfg)
	if err != nil {
		tb.Fatalf("host %s: %v", cfg.ExecutorID, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	// done closes when Run has returned (its error in runErr): both the
	// wait below and the cleanup wait on it, so neither takes the other's.
	done := make(chan struct{})
	var runErr error
	go func() { runErr = srv.Run(ctx); close(done) }()
	tb.Cleanup(func() { stop(); <-done })
	select {
	case <-serving:
	case <-done:
		tb.Fatalf("host %s: Run returned before serving: %v", cfg.ExecutorID, runErr)
	case <-time.After(testkit.Patience()): // a hang guard
		tb.Fatalf("host %s did not start serving within %v", cfg.ExecutorID, testkit.Patience())
	}
	return srv
}
