package broker

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The TLS listener's certificate and key are re-read when they change
// (renamed over, as cert-manager and kubelet do): a renewed certificate
// is shown to the next client without a restart; a version that does not
// load keeps the one in use, and the log says why.
func TestTLSCertificateReload(t *testing.T) {
	old, renewed := testkit.NewPKI(t), testkit.NewPKI(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	install := func(cert, key string) {
		t.Helper()
		for src, dst := range map[string]string{cert: certFile, key: keyFile} {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst+".new", b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dst+".new", dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	install(old.Server(t, "broker"))
	e, logs := startWith(t, Config{TLSAddr: "127.0.0.1:0", TLSCertFile: certFile, TLSKeyFile: keyFile,
		UsersFile: usersFile(t, "alice", "alice-pw")})
	if _, err := dialTLS(t, e.TLSAddr(), old, "", ""); err != nil {
		t.Fatalf("the first certificate: %v", err)
	}
	install(renewed.Server(t, "broker"))
	testkit.WaitFor(t, "the renewed certificate shown", func() bool {
		_, err := dialTLS(t, e.TLSAddr(), renewed, "", "")
		return err == nil
	})
	c, err := dialTLS(t, e.TLSAddr(), renewed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("over the renewed certificate: CONNACK 0x%02x", ack.ReasonCode)
	}
	const bad = "a file of the TLS listener changed and is not valid"
	before := strings.Count(logs.String(), bad) // the pair is replaced one file at a time
	if err := os.WriteFile(certFile+".new", []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(certFile+".new", certFile); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the bad certificate logged", func() bool { return strings.Count(logs.String(), bad) > before })
	if _, err := dialTLS(t, e.TLSAddr(), renewed, "", ""); err != nil {
		t.Errorf("after a bad certificate file: %v; want the renewed one still shown", err)
	}
}

// A Kubernetes volume update (the kubelet's atomic writer: a new
// ..<timestamp> folder, a ..data_tmp link to it renamed over ..data, the
// old folder removed) is one change of the files, seen once; a file
// changed after it (the sentinel) is seen after it, so the count is final.
func TestDataSwapSeenOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(version string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, version), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, version, "server.pem"), []byte(version), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("..2026_11_26_1")
	if err := os.Symlink("..2026_11_26_1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	cert, sentinel := filepath.Join(dir, "server.pem"), filepath.Join(dir, "sentinel")
	if err := os.Symlink(filepath.Join("..data", "server.pem"), cert); err != nil {
		t.Fatal(err)
	}
	changes := make(chan []string, 100)
	fw, err := watchFiles([]string{cert, sentinel}, func(paths []string) { changes <- paths }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()

	write("..2026_11_26_2")
	if err := os.Symlink("..2026_11_26_2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_26_1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for {
		paths := <-changes
		if len(paths) == 1 && paths[0] == sentinel {
			break
		}
		seen++
	}
	if seen != 1 {
		t.Fatalf("one volume update seen as %d changes, want 1", seen)
	}
}
