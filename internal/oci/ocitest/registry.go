// Package ocitest starts a real OCI registry for tests: Debian's
// docker-registry (distribution 2.8) on a free loopback port, with
// htpasswd basic auth, its storage in the test's temporary folder.
package ocitest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Registry is a running registry.
type Registry struct {
	// Host is its HOST:PORT, the REGISTRY of a reference.
	Host string
	// User and PasswordFile log in to it (basic auth over plain HTTP).
	User, PasswordFile string
}

// Start starts a registry that the test stops when it ends. It skips
// under -short and fails when docker-registry is not installed (.ci/deps).
func Start(t testing.TB) Registry {
	t.Helper()
	testkit.Needs(t, "docker-registry")
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Fatal("docker-registry is not installed: .ci/deps docker-registry (Debian's package) installs it")
	}
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("registry-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	r := Registry{User: "pusher", PasswordFile: filepath.Join(dir, "password")}
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.PasswordFile, []byte("registry-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Host = l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
auth:
  htpasswd:
    realm: cmdhost-test
    path: %s
`, filepath.Join(dir, "data"), r.Host, filepath.Join(dir, "htpasswd"))
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("docker-registry log:\n%s", log.String())
		}
	})
	// Up once /v2/ answers (401: it asks for the credentials).
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience())
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Host+"/v2/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return r
			}
		}
		select {
		case <-exited:
			t.Fatalf("docker-registry exited: %s", log.String())
		case <-ctx.Done():
			t.Fatalf("docker-registry did not answer on %s within %v", r.Host, testkit.Patience())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
