package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// Every byte size of serve takes a unit (the README writes sizes in MiB;
// --max-response-bytes 1MiB was "not a whole number"), from a flag or
// from the --config file; plain bytes still work; a bad one is a usage
// error that names the accepted forms.
func TestServeSizesTakeUnits(t *testing.T) {
	cfg := serveConfigOf(t, "--max-response-bytes", "1MiB", "--max-request-bytes", "512KiB", "--max-guest-memory", "2GB",
		"--max-module-size", "16MiB", "--reuse-max-bytes", "1000", "--max-dedup-bytes", "1.5MiB",
		"--broker-inflight-bytes", "8MiB", "--broker-held-bytes", "1GiB", "--broker-queue-bytes", "100MB",
		"--state-max-bytes", "2GiB", "--state-namespace-bytes", "64KiB")
	for name, got := range map[string][2]int64{
		"MaxResponseBytes":    {int64(cfg.Limits.MaxResponseBytes), 1 << 20},
		"MaxRequestBytes":     {int64(cfg.Broker.MaxRequestBytes), 512 << 10},
		"MaxGuestMemory":      {cfg.Limits.MaxGuestMemory, 2e9},
		"MaxModuleBytes":      {int64(cfg.Limits.MaxModuleBytes), 16 << 20},
		"ReuseMaxBytes":       {cfg.Store.ReuseMaxBytes, 1000},
		"MaxDedupBytes":       {cfg.Store.MaxDedupBytes, 1536 << 10},
		"BrokerInflightBytes": {int64(cfg.Embedded.InflightBytes), 8 << 20},
		"BrokerHeldBytes":     {int64(cfg.Embedded.HeldBytes), 1 << 30},
		"BrokerQueueBytes":    {int64(cfg.Embedded.QueueBytes), 100e6},
		"StateMaxBytes":       {cfg.Store.StateLimits.MaxTotalBytes, 2 << 30},
		"StateNamespaceBytes": {cfg.Store.StateLimits.Namespace.MaxBytes, 64 << 10},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %d; want %d", name, got[0], got[1])
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(file, []byte("max-response-bytes: 2MiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := clitest.Run(t, "serve", "--plugins", dir, "--config", file, "--listen", "256.0.0.1:1"); strings.Contains(errOut, "max-response-bytes") {
		t.Errorf("serve --config with max-response-bytes: 2MiB: status %d: %s", code, errOut)
	}

	for _, args := range [][]string{
		{"--max-response-bytes", "1MB2"},
		{"--max-guest-memory", "lots"},
	} {
		_, errOut, code := clitest.Run(t, append([]string{"serve", "--plugins", dir}, args...)...)
		if code != base.ExitUsage || !strings.Contains(errOut, args[0]+" "+args[1]+":") || !strings.Contains(errOut, "MiB") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("serve %v: status %d, %q; want one usage line naming the flag and the forms a size takes", args, code, errOut)
		}
	}
	if err := os.WriteFile(file, []byte("max-response-bytes: 1 megs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := clitest.Run(t, "serve", "--plugins", dir, "--config", file); code != base.ExitUsage || !strings.Contains(errOut, `serve.yaml:1: max-response-bytes: "1 megs": unknown unit "megs"`) {
		t.Errorf("a bad size in --config: status %d, %q", code, errOut)
	}
}
