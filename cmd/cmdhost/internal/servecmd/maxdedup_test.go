package servecmd

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// serve --max-dedup-bytes bounds the replies kept for duplicates: over
// it a reply is kept as a digest, counted in cmdhost_dedup_digests_total,
// while the request itself is answered whole. A negative bound is a usage
// error.
func TestServeMaxDedupBytes(t *testing.T) {
	if _, errOut, code := clitest.Run(t, "serve", "--plugins", clitest.Plugins, "--max-dedup-bytes", "-1"); code != 2 || !strings.Contains(errOut, "--max-dedup-bytes must not be negative") {
		t.Fatalf("serve --max-dedup-bytes -1: %q %d; want exit 2 naming the flag", errOut, code)
	}
	metrics := clitest.FreeAddr(t)
	addr, _ := clitest.StartServe(t, nil, "--max-dedup-bytes", "1024", "--metrics", metrics)
	payload := strings.Repeat("x", 2048)
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", payload, "--broker", "mqtt://"+addr, "--executor", "cli-host"); out != payload || code != 0 {
		t.Fatalf("invoke echo with 2 KiB: %d bytes, %q %d; want the whole payload", len(out), errOut, code)
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\ncmdhost_dedup_digests_total 1\n") {
		t.Fatalf("metrics: want cmdhost_dedup_digests_total 1:\n%s", clitest.GrepLines(string(body), "cmdhost_dedup"))
	}
}
