package jwt_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/jwt"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

const aud = "aio-internal"

func TestVerify(t *testing.T) {
	iss := testkit.NewIssuer(t)
	keys, err := jwt.ReadKeys(iss.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sub := "system:serviceaccount:ns:exec"
	good := iss.Token(t, sub, aud, now.Add(time.Hour), nil)
	c, err := jwt.Verify(good, keys, aud, now)
	if err != nil || c.Subject != sub || c.Expiry.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("good token: %+v, %v", c, err)
	}
	if jwks, err := jwt.ReadKeys(iss.JWKSFile); err != nil {
		t.Fatalf("the issuer's JWKS: %v", err)
	} else if _, err := jwt.Verify(good, jwks, aud, now); err != nil {
		t.Fatalf("good token against the JWKS: %v", err)
	}
	other := testkit.NewIssuer(t)
	parts := strings.Split(good, ".")
	for name, tc := range map[string]struct {
		token, want string
	}{
		"expired":      {iss.Token(t, sub, aud, now.Add(-time.Second), nil), "expired"},
		"audience":     {iss.Token(t, sub, "api", now.Add(time.Hour), nil), "audience"},
		"no exp":       {iss.Token(t, sub, aud, now.Add(time.Hour), map[string]any{"exp": nil}), "no expiry"},
		"not yet":      {iss.Token(t, sub, aud, now.Add(time.Hour), map[string]any{"nbf": now.Add(time.Minute).Unix()}), "not valid before"},
		"no subject":   {iss.Token(t, "", aud, now.Add(time.Hour), nil), "no subject"},
		"other issuer": {other.Token(t, sub, aud, now.Add(time.Hour), nil), "signature"},
		"claims swapped": {parts[0] + "." + base64.RawURLEncoding.EncodeToString(
			[]byte(`{"sub":"system:serviceaccount:ns:admin","aud":"aio-internal","exp":99999999999}`)) + "." + parts[2], "signature"},
		"alg none":  {unsigned(`{"alg":"none"}`, sub, now), "algorithm"},
		"alg HS256": {unsigned(`{"alg":"HS256"}`, sub, now), "algorithm"},
		"two parts": {parts[0] + "." + parts[1], "three"},
		"too large": {good + strings.Repeat("A", jwt.MaxTokenBytes), "bytes"},
	} {
		_, err := jwt.Verify(tc.token, keys, aud, now)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// unsigned is a token with header h and an empty signature.
func unsigned(h, sub string, now time.Time) string {
	claims := fmt.Sprintf(`{"sub":%q,"aud":%q,"exp":%d}`, sub, aud, now.Add(time.Hour).Unix())
	return base64.RawURLEncoding.EncodeToString([]byte(h)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + "."
}

// TestJWKS checks keys from a JWKS: RSA and EC, the key a token's kid
// names, and a key of another kid not tried for it.
func TestJWKS(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	point, err := ek.PublicKey.Bytes() // 4, x, y
	if err != nil {
		t.Fatal(err)
	}
	set := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"r1","use":"sig","alg":"RS256","n":%q,"e":"AQAB"},`+
		`{"kty":"EC","kid":"e1","crv":"P-256","x":%q,"y":%q}]}`,
		b64(rk.N.Bytes()), b64(point[1:33]), b64(point[33:]))
	keys, err := jwt.ParseKeys([]byte(set))
	if err != nil || keys.Len() != 2 {
		t.Fatalf("JWKS: %v", err)
	}
	now := time.Now()
	claims := fmt.Sprintf(`{"sub":"s","aud":"aio-internal","exp":%d}`, now.Add(time.Hour).Unix())
	rsaToken := func(kid string) string {
		signed := b64([]byte(`{"alg":"RS256","kid":"`+kid+`"}`)) + "." + b64([]byte(claims))
		d := sha256.Sum256([]byte(signed))
		sig, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return signed + "." + b64(sig)
	}
	if _, err := jwt.Verify(rsaToken("r1"), keys, aud, now); err != nil {
		t.Errorf("RS256 with kid r1: %v", err)
	}
	if _, err := jwt.Verify(rsaToken("e1"), keys, aud, now); err == nil {
		t.Error("RS256 naming the EC key's kid: accepted")
	}
	if _, err := jwt.Verify(rsaToken(""), keys, aud, now); err != nil {
		t.Errorf("RS256 without kid: %v", err)
	}
	for name, bad := range map[string]string{
		"private key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
		"empty":       `{"keys":[]}`,
		"small RSA":   `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		"HMAC":        `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`,
	} {
		if _, err := jwt.ParseKeys([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
