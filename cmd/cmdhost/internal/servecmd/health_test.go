package servecmd

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// serve --metrics ADDR answers the supervisors' probes: /healthz while the
// process lives, /readyz once it serves; a host that cannot reach its
// broker is alive but not ready, and says why.
func TestHealthAndReadiness(t *testing.T) {
	metrics := clitest.FreeAddr(t)
	clitest.StartServe(t, nil, "--metrics", metrics)
	if code, body := clitest.GetProbe("http://" + metrics + "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz of a serving host: %d %q", code, body)
	}
	if code, body := clitest.GetProbe("http://" + metrics + "/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz of a serving host: %d %q", code, body)
	}

	// No broker at the address: serve keeps trying (15 s), alive but not
	// ready.
	metrics = clitest.FreeAddr(t)
	cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "serve", "--plugins", clitest.Plugins, "--broker", "mqtt://"+clitest.FreeAddr(t),
		"--metrics", metrics, "--state-dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(time.Minute) // hang guard
	for {
		if code, _ := clitest.GetProbe("http://" + metrics + "/healthz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/healthz did not answer within a minute")
		}
		time.Sleep(20 * time.Millisecond) // polling a port that is not open yet
	}
	if code, body := clitest.GetProbe("http://" + metrics + "/readyz"); code != 503 || !strings.Contains(body, "not ready: starting") {
		t.Errorf("/readyz of a host without its broker: %d %q, want 503 not ready: starting…", code, body)
	}
}
