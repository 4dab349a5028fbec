package plugins

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/signing"
)

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// newTrustingManager is newManager with keys trusted.
func newTrustingManager(t *testing.T, dir string, trust ...ed25519.PublicKey) *Manager {
	t.Helper()
	m := NewManager(Config{Dir: dir, Engine: engine, Trust: trust, DrainTimeout: 20 * time.Second})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// TestSignaturesAtLoadAndReload: with keys trusted, a module without a
// signature file, or signed by another key, is refused at load (the
// reason in its status) and a signed one is served; a reload whose
// signature went bad is refused and the version serving goes on; Install
// takes the signature with the module and writes it beside it.
func TestSignaturesAtLoadAndReload(t *testing.T) {
	wat := readPlugin(t, "wat-echo")
	pub, priv := newKey(t)
	_, other := newKey(t)
	dir := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("unsigned.wasm", variant(wat, "u"))
	write("foreign.wasm", variant(wat, "f"))
	write("foreign.wasm.sig", signing.Sign(other, variant(wat, "f")))
	write("good.wasm", wat)
	write("good.wasm.sig", signing.Sign(priv, wat))
	m := newTrustingManager(t, dir, pub)
	m.LoadAll(context.Background())
	for name, want := range map[string]string{"unsigned": "not signed", "foreign": "no key the host trusts"} {
		if st, _ := status(m, name); st.State != StateFailed || !strings.Contains(st.LastError, want) {
			t.Errorf("%s: %+v, want failed with %q", name, st, want)
		}
	}
	if st, _ := status(m, "good"); st.State != StateServing {
		t.Fatalf("good: %+v", st)
	}
	mustEcho(t, m, "wat-echo")

	// The module refused unsigned, then signed: the signature arriving is
	// a change the watcher's sync acts on (it skips content refused before).
	// (It then clashes with good, which serves the same command: a load
	// that went past the signature check.)
	write("unsigned.wasm.sig", signing.Sign(priv, variant(wat, "u")))
	if err := m.syncFile(context.Background(), "unsigned", syncChanged); err == nil || !strings.Contains(err.Error(), "already served by plugin good") {
		t.Fatalf("the module signed after its refusal: %v, want it loaded (and its command found taken)", err)
	}

	write("good.wasm.sig", signing.Sign(other, wat))
	if err := m.Reload(context.Background(), "good"); err == nil || !strings.Contains(err.Error(), "no key the host trusts") {
		t.Fatalf("reload with a foreign signature: %v", err)
	}
	if st, _ := status(m, "good"); st.State != StateServing || st.Digest != digest(wat) || st.LastError == "" {
		t.Fatalf("good after the refused reload: %+v", st)
	}

	v2 := variant(wat, "v2")
	if _, err := m.Install(context.Background(), "good", v2, nil); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("install of an unsigned module: %v", err)
	}
	if _, err := m.Install(context.Background(), "good", v2, signing.Sign(priv, v2)); err != nil {
		t.Fatalf("install of a signed module: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "good.wasm.sig")); string(b) != string(signing.Sign(priv, v2)) {
		t.Fatal("the signature installed is not beside the module")
	}
	// The previous version went with its signature (a foreign one, by
	// now): rolling back to it is refused.
	if _, err := m.Rollback(context.Background(), "good"); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("rollback to a version whose signature is foreign: %v", err)
	}
}

// TestDigestPin: an operator file's "digest" refuses a module of another
// digest at load and at every reload, and lets its own be served; a pin
// that is no sha256 is an operator file error.
func TestDigestPin(t *testing.T) {
	wat := readPlugin(t, "wat-echo")
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p.wasm", string(wat))
	write("p.json", `{"digest": "sha256:`+digest(variant(wat, "other"))+`"}`)
	m, _ := newManager(t, dir, 0)
	m.LoadAll(context.Background())
	if st, _ := status(m, "p"); st.State != StateFailed || !strings.Contains(st.LastError, "pins") {
		t.Fatalf("p with another digest pinned: %+v", st)
	}
	write("p.json", `{"digest": "sha256:`+digest(wat)+`"}`)
	if err := m.Reload(context.Background(), "p"); err != nil {
		t.Fatalf("p with its digest pinned: %v", err)
	}
	if _, err := m.Install(context.Background(), "p", variant(wat, "new"), nil); err == nil || !strings.Contains(err.Error(), "pins") {
		t.Fatalf("install of another digest than the pin: %v", err)
	}
	if st, _ := status(m, "p"); st.State != StateServing || st.Digest != digest(wat) {
		t.Fatalf("p after the refused install: %+v", st)
	}
	// plugin install --plugins checks the pin before it copies.
	if err := m.Check(context.Background(), "p", variant(wat, "new")); err == nil || !strings.Contains(err.Error(), "pins") {
		t.Fatalf("Check of another digest than the pin: %v", err)
	}
	if _, err := ParseOperator("x.json", []byte(`{"digest": "sha256:abc"}`)); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("a pin that is no digest: %v", err)
	}
}

// A host that checks no signatures reads none: a NAME.wasm.sig it could
// not read (here a directory) does not fail the plugin.
func TestNoTrustReadsNoSignature(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.wasm"), readPlugin(t, "wat-echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "p.wasm.sig"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := newTrustingManager(t, dir)
	m.LoadAll(context.Background())
	if st, _ := status(m, "p"); st.State != StateServing {
		t.Fatalf("p beside an unreadable signature file, no key trusted: %+v", st)
	}
}
