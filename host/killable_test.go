package host_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// A host in a process of its own, for the tests that kill one with
// SIGKILL: the test binary run again, for the test that starts it only,
// serving the host its environment describes (killableHostEnv) until it
// is killed.

// killableHostEnv holds the killable host's configuration, as JSON.
const killableHostEnv = "CMDHOST_KILLABLE_HOST"

// killableHost is what a killable host's process needs of host.Config.
type killableHost struct {
	Plugins, Broker, Store, StateDir, ExecutorID, ClientID string
	OutboxTakeover                                         time.Duration
}

// startKillable starts a killable host for the test named test (which
// must begin with serveIfKillable) and returns its process once it
// serves; it is killed, if it still runs, when the test ends.
func startKillable(t *testing.T, test string, cfg killableHost) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), killableHostEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // closed when this process ends: the host ends then too
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	serving := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if lines.Text() == "serving" {
				close(serving)
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(testkit.Patience()): // a hang guard
		t.Fatalf("host %s did not serve within %v", cfg.ClientID, testkit.Patience())
	}
	return cmd
}

// kill kills a killable host with SIGKILL and waits until it is gone.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// serveIfKillable, in a killable host's process, serves the host, says
// so on stdout, and runs until it is killed (or the end of the test that
// started it closes its stdin): it returns true then. Elsewhere it
// returns false at once.
func serveIfKillable(t *testing.T) bool {
	env := os.Getenv(killableHostEnv)
	if env == "" {
		return false
	}
	var cfg killableHost
	if err := json.Unmarshal([]byte(env), &cfg); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Broker)
	if err != nil {
		t.Fatal(err)
	}
	// Its errors go to the test's output.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	hosttest.Serve(t, host.Config{
		PluginsDir: cfg.Plugins,
		ExecutorID: cfg.ExecutorID,
		CacheDir:   testkit.CacheDir(),
		Logger:     log,
		Broker:     host.BrokerConfig{URL: u, ClientID: cfg.ClientID},
		Store: host.StoreConfig{
			URL:            cfg.Store,
			StateDir:       cfg.StateDir,
			OutboxTakeover: cfg.OutboxTakeover,
		},
	})
	fmt.Println("serving")
	_, _ = io.Copy(io.Discard, os.Stdin)
	t.Fatal("the test that started this host ended without killing it")
	return true
}
