// Package signing signs plugin modules and checks their signatures:
// Ed25519 over the module's sha256 digest, keys in the PEM files OpenSSL
// writes and reads.
//
// The format, exactly:
//
//   - The signed message is the ASCII text "sha256:" followed by the 64
//     lower-case hex digits of the sha256 of the module file's bytes (no
//     newline): Message.
//   - The signature is Ed25519 (RFC 8032, pure, no pre-hash) over that
//     message with the signer's private key; its file, NAME.wasm.sig beside
//     the module, holds the 64-byte signature in standard base64 (RFC 4648,
//     with padding) and a newline.
//   - A private key is a PEM block "PRIVATE KEY" holding a PKCS #8 Ed25519
//     key (`openssl genpkey -algorithm ed25519`); a public key, a PEM block
//     "PUBLIC KEY" holding a PKIX Ed25519 key (`openssl pkey -pubout`).
//
// So OpenSSL checks a signature too: `base64 -d greet.wasm.sig > sig.bin;
// printf 'sha256:%s' "$(sha256sum greet.wasm | cut -d' ' -f1)" > msg;
// openssl pkeyutl -verify -pubin -inkey signing.pub -rawin -in msg
// -sigfile sig.bin`.
package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/internal/regfile"
)

// Ext is the signature file's extension, after the module's name:
// greet.wasm → greet.wasm.sig.
const Ext = ".sig"

// maxKeyFile and MaxSignatureFile bound what is read: a PEM key is a few
// hundred bytes, a signature file 89.
const (
	maxKeyFile       = 64 << 10
	MaxSignatureFile = 4 << 10
)

// ErrNoTrustedKey is a signature by none of the keys trusted.
var ErrNoTrustedKey = errors.New("the signature is by no key the host trusts")

// Message is what is signed for a module of sha256 digest (hex).
func Message(digest string) []byte { return []byte("sha256:" + digest) }

// Sign returns the signature file's content for module bin.
func Sign(key ed25519.PrivateKey, bin []byte) []byte {
	sum := sha256.Sum256(bin)
	sig := ed25519.Sign(key, Message(hex.EncodeToString(sum[:])))
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
}

// Verify checks the signature file content sigFile of a module of sha256
// digest (hex) against the keys trusted: nil when one of them made it.
func Verify(trusted []ed25519.PublicKey, digest string, sigFile []byte) error {
	sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sigFile)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("the signature file is not a base64 Ed25519 signature (cmdhost plugin sign writes one)")
	}
	for _, k := range trusted {
		if ed25519.Verify(k, Message(digest), sig) {
			return nil
		}
	}
	return ErrNoTrustedKey
}

// GenerateKey returns a new key pair as PEM: the private key (PKCS #8)
// and the public key (PKIX).
func GenerateKey() (private, public []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// ReadPrivateKey reads an Ed25519 private key file (PEM, PKCS #8).
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	block, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(block)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an Ed25519 key (openssl genpkey -algorithm ed25519, or cmdhost plugin keygen)", path, k)
	}
	return priv, nil
}

// ReadPublicKey reads an Ed25519 public key file (PEM, PKIX).
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	block, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(block)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an Ed25519 public key (openssl pkey -pubout, or cmdhost plugin keygen)", path, k)
	}
	return pub, nil
}

// readPEM returns the DER of the first PEM block of type typ in path.
func readPEM(path, typ string) ([]byte, error) {
	b, err := regfile.Read(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM block %q (a key file as openssl writes it)", path, typ)
		}
		if block.Type == typ {
			return block.Bytes, nil
		}
	}
}
