package servecmd

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// serve --max-expiry caps the message expiry the host honours: a request
// asking for more is refused with 400 naming the limit.
func TestServeMaxExpiry(t *testing.T) {
	addr, _ := clitest.StartServe(t, nil, "--max-expiry", "2s")
	broker := "mqtt://" + addr
	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--timeout", "3s", "--broker", broker, "--executor", "cli-host")
	if code != 1 || !strings.Contains(errOut, "status 400") || !strings.Contains(errOut, "maximum of 2 s") {
		t.Fatalf("invoke --timeout 3s against --max-expiry 2s: %q %q %d, want 400 naming the maximum", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--timeout", "2s", "--broker", broker, "--executor", "cli-host"); out != "hi" || code != 0 {
		t.Fatalf("invoke --timeout 2s: %q %q %d", out, errOut, code)
	}
}
