package exactlyonce

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// While the shared store refuses requests for want of memory, /readyz says
// so (the host does not serve non-idempotent commands) and the refusals are
// counted with reason "full"; once a request is recorded again, the host
// is ready again.
func TestStoreFullShowsInReadiness(t *testing.T) {
	r := testkit.StartRedis(t)
	l := newLedger(t)
	metrics := clitest.FreeAddr(t)
	addr, _ := clitest.StartServeIn(t, l.plugins, nil, "--store", r.URL, "--metrics", metrics)
	if code, body := clitest.GetProbe("http://" + metrics + "/readyz"); code != 200 {
		t.Fatalf("/readyz before the store is full: %d %q", code, body)
	}
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := testkit.RedisCLI(r.Addr, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, errOut, code := clitest.Run(t, "invoke", "ledger", "-d", "x", "--broker", "mqtt://"+addr, "--executor", "cli-host", "--timeout", "30s"); code != base.ExitFailed {
		t.Fatalf("invoke on a full store: exit %d, %q; want 503", code, errOut)
	}
	if code, body := clitest.GetProbe("http://" + metrics + "/readyz"); code != 503 || !strings.Contains(body, "the dedup store is full") || !strings.Contains(body, "answered 503") {
		t.Errorf("/readyz with the store full: %d %q", code, body)
	}
	if _, body := clitest.GetProbe("http://" + metrics + "/metrics"); !strings.Contains(body, `cmdhost_dedup_store_unavailable_total{command="ledger",reason="full"} 1`) {
		t.Errorf("the refusal is not counted as full:\n%s", clitest.GrepLines(body, "dedup_store_unavailable"))
	}
	if _, err := testkit.RedisCLI(r.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	invokeLedger(t, "mqtt://"+addr, "after", 1)
	if code, body := clitest.GetProbe("http://" + metrics + "/readyz"); code != 200 {
		t.Errorf("/readyz once a request is recorded again: %d %q", code, body)
	}
}
