package oci_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/oci/ocitest"
)

// A module pushed to a real registry with basic auth comes back whole by
// tag, by digest and with oci://; without credentials, or with a docker
// config file of other ones, the registry refuses; a pull over the size
// limit, and of an artifact that is no Wasm module, is refused.
func TestPushPull(t *testing.T) {
	reg := ocitest.Start(t)
	ctx := context.Background()
	bin := []byte("\x00asm\x01\x00\x00\x00 a module of a test")
	cfg := oci.Config{Username: reg.User, PasswordFile: reg.PasswordFile, PlainHTTP: true}
	ref := reg.Host + "/plugins/greet:1.0"

	pushed, err := oci.Push(ctx, ref, bin, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	if pushed.Module != "sha256:"+hex.EncodeToString(sum[:]) || !strings.HasPrefix(pushed.Reference, reg.Host+"/plugins/greet@sha256:") {
		t.Fatalf("pushed %+v", pushed)
	}
	for _, r := range []string{ref, oci.Scheme + ref, pushed.Reference} {
		got, err := oci.Pull(ctx, r, cfg)
		if err != nil || string(got.Module) != string(bin) || got.Name != "greet" || got.Manifest != pushed.Manifest || got.Signature != nil {
			t.Fatalf("pull %s: %+v, %v", r, got, err)
		}
	}
	if _, err := oci.Pull(ctx, ref, oci.Config{PlainHTTP: true}); err == nil || !strings.Contains(err.Error(), "the registry asks for credentials") {
		t.Fatalf("pull without credentials: %v, want unauthorized", err)
	}
	// HTTPS to a plain-HTTP registry names the flag (issue 36 item 10).
	if _, err := oci.Push(ctx, ref, bin, nil, oci.Config{Username: reg.User, PasswordFile: reg.PasswordFile}); err == nil || !strings.Contains(err.Error(), "give --plain-http") {
		t.Fatalf("push over HTTPS to a plain-HTTP registry: %v, want the hint of --plain-http", err)
	}
	if _, err := oci.Pull(ctx, ref, oci.Config{Username: reg.User, PasswordFile: reg.PasswordFile, PlainHTTP: true, MaxBytes: 8}); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("pull over the limit: %v", err)
	}

	// A docker config file with the registry's credentials works too.
	pw, err := os.ReadFile(reg.PasswordFile)
	if err != nil {
		t.Fatal(err)
	}
	dockerCfg := filepath.Join(t.TempDir(), "config.json")
	authz := base64.StdEncoding.EncodeToString([]byte(reg.User + ":" + strings.TrimSpace(string(pw))))
	if err := os.WriteFile(dockerCfg, []byte(`{"auths":{"`+reg.Host+`":{"auth":"`+authz+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := oci.Pull(ctx, ref, oci.Config{DockerConfig: dockerCfg, PlainHTTP: true}); err != nil || string(got.Module) != string(bin) {
		t.Fatalf("pull with a docker config: %v", err)
	}
	if _, err := oci.Pull(ctx, reg.Host+"/plugins/none:1.0", cfg); err == nil {
		t.Fatal("pull of a repository that does not exist: no error")
	}
	if _, err := oci.Push(ctx, pushed.Reference, bin, nil, cfg); err == nil {
		t.Fatal("push to a digest: no error")
	}
}

// A signature pushed with the module comes back with it.
func TestPushPullSignature(t *testing.T) {
	reg := ocitest.Start(t)
	cfg := oci.Config{Username: reg.User, PasswordFile: reg.PasswordFile, PlainHTTP: true}
	bin, sig := []byte("\x00asm\x01\x00\x00\x00"), []byte("c2lnbmF0dXJl\n")
	if _, err := oci.Push(context.Background(), reg.Host+"/p/signed:1", bin, sig, cfg); err != nil {
		t.Fatal(err)
	}
	got, err := oci.Pull(context.Background(), reg.Host+"/p/signed:1", cfg)
	if err != nil || string(got.Module) != string(bin) || string(got.Signature) != string(sig) {
		t.Fatalf("pull: %+v, %v", got, err)
	}
}
