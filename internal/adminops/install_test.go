package adminops_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// TestInstallChunks: the install op takes a module in chunks, in order;
// a chunk out of order, a module over the size limit, chunks that do not
// hash to the digest announced, and a third upload while two wait are
// refused with a status that says what to do, and nothing is installed;
// an upload idle for a minute gives way to a new one.
func TestInstallChunks(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	bin, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	m, dir := newManager(t)
	clk := testkit.NewClock(time.Unix(1e9, 0))
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "t", MaxModuleBytes: 1 << 20, Clock: clk})
	install := adminOp(t, a, "install")
	s := sha256.Sum256(bin)
	digest := hex.EncodeToString(s[:])
	send := func(name, digest string, size, off int, data []byte) *abi.Response {
		t.Helper()
		resp, err := install(context.Background(), &abi.Request{Payload: data, Metadata: map[string]string{admin.TokenKey: "t",
			admin.InstallNameKey: name, admin.InstallDigestKey: digest, admin.InstallSizeKey: strconv.Itoa(size), admin.InstallOffsetKey: strconv.Itoa(off)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	refused := func(resp *abi.Response, status abi.Status, want string) {
		t.Helper()
		if resp.Status != status || !strings.Contains(resp.Message, want) {
			t.Fatalf("reply %d %q, want %d with %q", resp.Status, resp.Message, status, want)
		}
	}
	half := len(bin) / 2

	refused(send("w", digest, 2<<20, 0, bin[:half]), abi.StatusBadRequest, "--max-module-size")
	refused(send("w", digest, len(bin), half, bin[half:]), abi.StatusBadRequest, "from offset 0")
	refused(send("w", "ABC", len(bin), 0, bin), abi.StatusBadRequest, "sha256")
	refused(send(".w", digest, len(bin), 0, bin), abi.StatusBadRequest, "dot")

	if resp := send("w", digest, len(bin), 0, bin[:half]); resp.Status != 0 || !strings.Contains(string(resp.Payload), `"received":`+strconv.Itoa(half)) {
		t.Fatalf("first chunk: %d %q %s", resp.Status, resp.Message, resp.Payload)
	}
	refused(send("w", digest, len(bin), 1, bin[1:2]), abi.StatusBadRequest, "holds "+strconv.Itoa(half))
	bad := append([]byte(nil), bin[half:]...)
	bad[0] ^= 0xff
	refused(send("w", digest, len(bin), half, bad), abi.StatusBadRequest, "not the "+digest)

	// Two uploads wait; a third is refused until one has idled a minute.
	send("x", digest, len(bin), 0, bin[:half])
	send("y", digest, len(bin), 0, bin[:half])
	refused(send("z", digest, len(bin), 0, bin[:half]), abi.StatusServiceUnavailable, "try again")
	clk.Add(time.Minute)
	if resp := send("z", digest, len(bin), 0, bin[:half]); resp.Status != 0 {
		t.Fatalf("after a minute: %d %q", resp.Status, resp.Message)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the refusals wrote %v", entries)
	}

	resp := send("z", digest, len(bin), half, bin[half:])
	var v admin.Verdict
	if err := json.Unmarshal(resp.Payload, &v); err != nil || !v.Served || v.Name != "z" || v.Digest != digest {
		t.Fatalf("last chunk: %d %q %s", resp.Status, resp.Message, resp.Payload)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "z.wasm")); string(b) != string(bin) {
		t.Fatal("z.wasm is not the module sent")
	}
}
