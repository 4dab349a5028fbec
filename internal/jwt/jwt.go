// Package jwt checks JSON Web Tokens (RFC 7519) signed with a key pair:
// a Kubernetes service account token (K8S-SAT) that a client of the
// embedded broker logs in with. Only what such a check needs, with the
// standard library: the compact form (header.payload.signature), the
// algorithms RS256/384/512, ES256/384 and EdDSA (never "none", never a
// shared-secret HMAC), public keys from PEM or a JWKS file (keys.go), and
// the claims exp (required), nbf, aud and sub (required).
//
// A token is bounded (MaxTokenBytes) before it is decoded; errors say
// what is wrong with a token, never its content.
package jwt

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
)

// MaxTokenBytes bounds a token: a Kubernetes service account token is
// 1–2 KiB.
const MaxTokenBytes = 8 << 10

// MaxSubjectBytes bounds the subject claim (it becomes a user name).
const MaxSubjectBytes = 512

// notBeforeLeeway is how early a token may be used before its nbf: the
// clocks of the issuer and of this host may differ a little.
const notBeforeLeeway = 30 * time.Second

// Claims are the claims of a token that passed Verify.
type Claims struct {
	// Subject is the sub claim (a service account token's
	// system:serviceaccount:NAMESPACE:NAME).
	Subject string
	// Expiry is the exp claim: the token is refused from then on.
	Expiry time.Time
}

// header is a token's JOSE header.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// payload is the part of a token's claims Verify reads.
type payload struct {
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *float64        `json:"exp"`
	Nbf *float64        `json:"nbf"`
}

// Verify checks token: its size and form, its signature by one of keys
// (the one its kid names, if it names one), its expiry and not-before
// against now, and that its audience holds audience. It returns the
// token's claims.
func Verify(token string, keys *Keys, audience string, now time.Time) (Claims, error) {
	parts, err := split(token)
	if err != nil {
		return Claims{}, err
	}
	var h header
	if err := decodePart(parts[0], &h); err != nil {
		return Claims{}, fmt.Errorf("token header: %w", err)
	}
	alg, ok := algorithms[h.Alg]
	if !ok {
		return Claims{}, fmt.Errorf("token algorithm %q: accepted are RS256, RS384, RS512, ES256, ES384 and EdDSA", cut(h.Alg))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Claims{}, errors.New("token signature: not base64url")
	}
	if err := keys.verify(alg, h.Kid, []byte(parts[0]+"."+parts[1]), sig); err != nil {
		return Claims{}, err
	}
	var p payload
	if err := decodePart(parts[1], &p); err != nil {
		return Claims{}, fmt.Errorf("token claims: %w", err)
	}
	return p.check(audience, now)
}

// Claimed returns the claims of a token that Verify accepted before (the
// same bytes: the broker checks a CONNECT's token at login, and wants its
// expiry once the session is up), checked again against now and audience
// but not its signature: no key is read and nothing costly is done.
func Claimed(token, audience string, now time.Time) (Claims, error) {
	parts, err := split(token)
	if err != nil {
		return Claims{}, err
	}
	var p payload
	if err := decodePart(parts[1], &p); err != nil {
		return Claims{}, fmt.Errorf("token claims: %w", err)
	}
	return p.check(audience, now)
}

// split bounds a token and splits it into its three parts.
func split(token string) ([]string, error) {
	if len(token) > MaxTokenBytes {
		return nil, fmt.Errorf("token of %d bytes: more than %d", len(token), MaxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a signed JWT: want three base64url parts, header.payload.signature")
	}
	return parts, nil
}

// check checks the claims of a token whose signature is good.
func (p payload) check(audience string, now time.Time) (Claims, error) {
	if p.Exp == nil {
		return Claims{}, errors.New("the token has no expiry (exp): refused, as it would be good for ever")
	}
	exp, err := numericDate(*p.Exp)
	if err != nil {
		return Claims{}, fmt.Errorf("token exp: %w", err)
	}
	if !now.Before(exp) {
		return Claims{}, fmt.Errorf("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if p.Nbf != nil {
		nbf, err := numericDate(*p.Nbf)
		if err != nil {
			return Claims{}, fmt.Errorf("token nbf: %w", err)
		}
		if now.Add(notBeforeLeeway).Before(nbf) {
			return Claims{}, fmt.Errorf("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	auds, err := audiences(p.Aud)
	if err != nil {
		return Claims{}, err
	}
	if !slices.Contains(auds, audience) {
		return Claims{}, fmt.Errorf("the token's audience is not %q (a token made for another service)", audience)
	}
	switch {
	case p.Sub == "":
		return Claims{}, errors.New("the token has no subject (sub)")
	case len(p.Sub) > MaxSubjectBytes:
		return Claims{}, fmt.Errorf("the token's subject is longer than %d bytes", MaxSubjectBytes)
	}
	return Claims{Subject: p.Sub, Expiry: exp}, nil
}

// audiences reads the aud claim: one string or an array of them.
func audiences(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, errors.New("the token has no audience (aud)")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("token aud: want a string or an array of strings")
	}
	return many, nil
}

// numericDate turns a NumericDate (seconds since the epoch, maybe with a
// fraction) into a time.
func numericDate(v float64) (time.Time, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1<<40 {
		return time.Time{}, errors.New("not a date")
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

// decodePart decodes a base64url JSON part of a token into v.
func decodePart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return errors.New("not base64url")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("not a JSON object of the expected shape")
	}
	return nil
}

// cut bounds a string from a token for an error.
func cut(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// algorithm is a signature algorithm a token may name.
type algorithm struct {
	kind string      // "RSA", "EC" or "OKP": the key type it needs
	hash crypto.Hash // 0 for EdDSA (it hashes itself)
	size int         // EC: the byte length of r and of s
}

var algorithms = map[string]algorithm{
	"RS256": {kind: "RSA", hash: crypto.SHA256},
	"RS384": {kind: "RSA", hash: crypto.SHA384},
	"RS512": {kind: "RSA", hash: crypto.SHA512},
	"ES256": {kind: "EC", hash: crypto.SHA256, size: 32},
	"ES384": {kind: "EC", hash: crypto.SHA384, size: 48},
	"EdDSA": {kind: "OKP"},
}

// check reports whether sig is a signature of signed by pub with alg.
func (alg algorithm) check(pub crypto.PublicKey, signed, sig []byte) bool {
	var digest []byte
	if alg.hash != 0 {
		h := alg.hash.New()
		h.Write(signed)
		digest = h.Sum(nil)
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return alg.kind == "RSA" && rsa.VerifyPKCS1v15(k, alg.hash, digest, sig) == nil
	case *ecdsa.PublicKey:
		if alg.kind != "EC" || len(sig) != 2*alg.size || (k.Curve.Params().BitSize+7)/8 != alg.size {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:alg.size]), new(big.Int).SetBytes(sig[alg.size:])
		return ecdsa.Verify(k, digest, r, s)
	case ed25519.PublicKey:
		return alg.kind == "OKP" && ed25519.Verify(k, signed, sig)
	}
	return false
}
