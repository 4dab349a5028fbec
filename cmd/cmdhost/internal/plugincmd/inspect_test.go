package plugincmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

func TestInspectJSON(t *testing.T) {
	out, errOut, code := clitest.Run(t, "plugin", "inspect", "--json", filepath.Join(clitest.Plugins, "counter-idem.wasm"))
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect --json printed %q: %v", out, err)
	}
	if in.Name != "counter-idem" || in.ABIVersion != 1 || len(in.Commands) != 1 ||
		!in.Commands[0].Idempotent || in.Commands[0].ResponseTTL != "1h0m0s" || !strings.HasPrefix(in.Digest, "sha256:") {
		t.Fatalf("inspect: %+v", in)
	}
}

func TestInspectTable(t *testing.T) {
	out, _, code := clitest.Run(t, "plugin", "inspect", filepath.Join(clitest.Plugins, "probe.wasm"))
	for _, want := range []string{"ABI version:  1", "capabilities: [filesystem]", "probe-request  false", "application/json,text/plain"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect table lacks %q:\n%s", want, out)
		}
	}
}
