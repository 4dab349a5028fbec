package signing_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeKeys writes a new key pair into dir and returns the files.
func writeKeys(t *testing.T, dir, name string) (priv, pub string) {
	t.Helper()
	a, b, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, name), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(priv, a, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// A signature verifies with its key and no other; a file that is no
// signature, and a module changed after signing, do not.
func TestSignVerify(t *testing.T) {
	dir := t.TempDir()
	privFile, pubFile := writeKeys(t, dir, "a")
	_, otherFile := writeKeys(t, dir, "b")
	priv, err := signing.ReadPrivateKey(privFile)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.ReadPublicKey(pubFile)
	if err != nil {
		t.Fatal(err)
	}
	other, err := signing.ReadPublicKey(otherFile)
	if err != nil {
		t.Fatal(err)
	}
	module := []byte("\x00asm\x01\x00\x00\x00")
	sig := signing.Sign(priv, module)
	if len(sig) != 89 || sig[88] != '\n' {
		t.Fatalf("signature file %q: want 88 base64 characters and a newline", sig)
	}
	if err := signing.Verify(nil, digest(module), sig); !errors.Is(err, signing.ErrNoTrustedKey) {
		t.Errorf("no key trusted: %v", err)
	}
	if err := signing.Verify([]ed25519.PublicKey{other, pub}, digest(module), sig); err != nil {
		t.Errorf("the signer's key among others: %v", err)
	}
	if err := signing.Verify([]ed25519.PublicKey{other}, digest(module), sig); !errors.Is(err, signing.ErrNoTrustedKey) {
		t.Errorf("another key: %v", err)
	}
	if err := signing.Verify([]ed25519.PublicKey{pub}, digest(append(module, 0)), sig); !errors.Is(err, signing.ErrNoTrustedKey) {
		t.Errorf("a changed module: %v", err)
	}
	if err := signing.Verify([]ed25519.PublicKey{pub}, digest(module), []byte("not base64!")); err == nil || errors.Is(err, signing.ErrNoTrustedKey) {
		t.Errorf("a file that is no signature: %v", err)
	}
	if _, err := signing.ReadPublicKey(privFile); err == nil {
		t.Error("a private key read as a public one")
	}
}

// The format is OpenSSL's: a key it makes signs here, and OpenSSL checks
// the signature as docs/fleet.md shows.
func TestOpenSSLChecksSignature(t *testing.T) {
	testkit.Needs(t, "openssl")
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is not installed (.ci/deps openssl)")
	}
	dir := t.TempDir()
	key, pub := filepath.Join(dir, "k.pem"), filepath.Join(dir, "k.pub")
	for _, args := range [][]string{{"genpkey", "-algorithm", "ed25519", "-out", key}, {"pkey", "-in", key, "-pubout", "-out", pub}} {
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	priv, err := signing.ReadPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	module := []byte("\x00asm\x01\x00\x00\x00 signed by an openssl key")
	sig := signing.Sign(priv, module)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	if err != nil {
		t.Fatal(err)
	}
	msg, sigBin := filepath.Join(dir, "msg"), filepath.Join(dir, "sig.bin")
	if err := os.WriteFile(msg, signing.Message(digest(module)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigBin, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", msg, "-sigfile", sigBin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Fatalf("openssl pkeyutl -verify: %v\n%s", err, out)
	}
	k, err := signing.ReadPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := signing.Verify([]ed25519.PublicKey{k}, digest(module), sig); err != nil {
		t.Fatalf("openssl's public key: %v", err)
	}
}
