package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Issuer signs Kubernetes-style service account tokens (JWT, ES256) for
// tests, as the API server would: a test makes the tokens and the
// public key file a SAT-checking broker trusts instead of carrying any.
type Issuer struct {
	Dir     string // the folder of its files
	KeyFile string // its public key, PEM (PUBLIC KEY)
	// JWKSFile is its public key as a JWKS (kid "test"), as the API
	// server publishes it (/openid/v1/jwks).
	JWKSFile string
	key      *ecdsa.PrivateKey
}

// NewIssuer makes an issuer with a new P-256 key.
func NewIssuer(tb testing.TB) *Issuer {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	iss := &Issuer{Dir: tb.TempDir(), key: key}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		tb.Fatal(err)
	}
	iss.KeyFile = filepath.Join(iss.Dir, "sa.pub")
	writePEM(tb, iss.KeyFile, "PUBLIC KEY", der)
	b64 := base64.RawURLEncoding.EncodeToString
	point, err := key.PublicKey.Bytes() // 4, x, y
	if err != nil {
		tb.Fatal(err)
	}
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "kid": "test", "use": "sig", "alg": "ES256",
		"x": b64(point[1:33]), "y": b64(point[33:])}}})
	if err != nil {
		tb.Fatal(err)
	}
	iss.JWKSFile = filepath.Join(iss.Dir, "jwks.json")
	if err := os.WriteFile(iss.JWKSFile, jwks, 0o644); err != nil {
		tb.Fatal(err)
	}
	return iss
}

// Token signs a token for subject and audience, expiring at exp, with
// any extra claims (which override those).
func (iss *Issuer) Token(tb testing.TB, subject, audience string, exp time.Time, extra map[string]any) string {
	tb.Helper()
	claims := map[string]any{"sub": subject, "aud": []string{audience}, "exp": exp.Unix(),
		"iat": exp.Add(-time.Hour).Unix(), "iss": "https://kubernetes.default.svc"}
	for k, v := range extra {
		claims[k] = v
	}
	return iss.sign(tb, map[string]any{"alg": "ES256", "typ": "JWT", "kid": "test"}, claims)
}

// sign makes a compact JWS of header and claims with the issuer's key.
func (iss *Issuer) sign(tb testing.TB, header, claims map[string]any) string {
	tb.Helper()
	part := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := part(header) + "." + part(claims)
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, iss.key, digest[:])
	if err != nil {
		tb.Fatal(err)
	}
	sig := append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// WriteToken writes token to path as kubelet does: a new file renamed
// over the old one, so that a reader never sees half a token.
func WriteToken(tb testing.TB, path, token string) {
	tb.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}
