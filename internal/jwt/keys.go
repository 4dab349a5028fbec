package jwt

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
)

// MaxKeysBytes bounds a keys file.
const MaxKeysBytes = 1 << 20

// Keys are the public keys a token may be signed by: those of its
// issuer (the Kubernetes API server's service account keys).
type Keys struct {
	keys []key
}

type key struct {
	kid string // the JWKS key id; "" for a PEM key
	pub crypto.PublicKey
}

// Len is the number of keys.
func (k *Keys) Len() int { return len(k.keys) }

// ReadKeys reads a keys file: a JWKS (a JSON object {"keys": [...]},
// what the issuer publishes at its jwks_uri; `kubectl get --raw
// /openid/v1/jwks`), or PEM blocks of public keys (PUBLIC KEY, RSA PUBLIC
// KEY) or certificates.
func ReadKeys(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxKeysBytes+1))
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	if len(b) > MaxKeysBytes {
		return nil, fmt.Errorf("keys file %s: more than %d bytes", path, MaxKeysBytes)
	}
	k, err := ParseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	return k, nil
}

// ParseKeys parses what ReadKeys reads.
func ParseKeys(b []byte) (*Keys, error) {
	var (
		keys []key
		err  error
	)
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		keys, err = parseJWKS(t)
	} else {
		keys, err = parsePEM(b)
	}
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("no public key in it: want a JWKS ({\"keys\": [...]}) or PEM PUBLIC KEY or CERTIFICATE blocks")
	}
	return &Keys{keys: keys}, nil
}

// parsePEM reads PEM public keys and certificates; other blocks (a
// private key given by mistake) are an error.
func parsePEM(b []byte) ([]key, error) {
	var keys []key
	for n := 1; ; n++ {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return keys, nil
		}
		var (
			pub any
			err error
		)
		switch blk.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(blk.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(blk.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(blk.Bytes); err == nil {
				pub = c.PublicKey
			}
		default:
			return nil, fmt.Errorf("PEM block %d is a %s: want public keys or certificates only (never a private key)", n, blk.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", n, err)
		}
		if !usable(pub) {
			return nil, fmt.Errorf("PEM block %d: a %T key: want RSA, ECDSA P-256/P-384 or Ed25519", n, pub)
		}
		keys = append(keys, key{pub: pub})
	}
}

// jwk is one key of a JWKS (RFC 7517, 7518 §6, 8037).
type jwk struct {
	Kty, Kid, Use, Crv string
	N, E, X, Y         string
}

func parseJWKS(b []byte) ([]key, error) {
	var set struct{ Keys []jwk }
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS: %w", err)
	}
	var keys []key
	for i, j := range set.Keys {
		if j.Use != "" && j.Use != "sig" {
			continue // an encryption key signs nothing
		}
		pub, err := j.public()
		if err != nil {
			return nil, fmt.Errorf("JWKS key %d (kid %q): %w", i, cut(j.Kid), err)
		}
		keys = append(keys, key{kid: j.Kid, pub: pub})
	}
	return keys, nil
}

// public is the public key j describes.
func (j jwk) public() (crypto.PublicKey, error) {
	num := func(s string) (*big.Int, error) {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			return nil, errors.New("a parameter is not base64url")
		}
		return new(big.Int).SetBytes(b), nil
	}
	switch j.Kty {
	case "RSA":
		n, err := num(j.N)
		if err != nil {
			return nil, err
		}
		e, err := num(j.E)
		if err != nil {
			return nil, err
		}
		if n.BitLen() < 2048 || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return nil, errors.New("an RSA key of fewer than 2048 bits or with a bad exponent")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return nil, fmt.Errorf("curve %q: want P-256 or P-384", cut(j.Crv))
		}
		x, err := num(j.X)
		if err != nil {
			return nil, err
		}
		y, err := num(j.Y)
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		point := append([]byte{4}, append(x.FillBytes(make([]byte, size)), y.FillBytes(make([]byte, size))...)...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, fmt.Errorf("not a point of %s", j.Crv)
		}
		return pub, nil
	case "OKP":
		b, err := base64.RawURLEncoding.DecodeString(j.X)
		if j.Crv != "Ed25519" || err != nil || len(b) != ed25519.PublicKeySize {
			return nil, errors.New("an OKP key that is not Ed25519")
		}
		return ed25519.PublicKey(b), nil
	}
	return nil, fmt.Errorf("key type %q: want RSA, EC or OKP", cut(j.Kty))
}

// usable reports whether pub is a key type Verify can check.
func usable(pub any) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen() >= 2048
	case *ecdsa.PublicKey:
		return k.Curve == elliptic.P256() || k.Curve == elliptic.P384()
	case ed25519.PublicKey:
		return true
	}
	return false
}

// errBadSignature is a signature none of the keys made.
var errBadSignature = errors.New("the token's signature is not one of the trusted keys'")

// verify checks sig over signed with the key kid names (when a key has
// that id) or else with every key.
func (k *Keys) verify(alg algorithm, kid string, signed, sig []byte) error {
	if k == nil {
		return errBadSignature
	}
	if kid != "" {
		for _, kk := range k.keys {
			if kk.kid == kid {
				if alg.check(kk.pub, signed, sig) {
					return nil
				}
				return errBadSignature
			}
		}
	}
	for _, kk := range k.keys {
		if alg.check(kk.pub, signed, sig) {
			return nil
		}
	}
	return errBadSignature
}
