package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a private certificate authority of a test's own, in a folder of
// its own: a test makes the server and client certificates it needs
// instead of carrying any.
type PKI struct {
	Dir    string // the folder of its files
	CAFile string // the CA certificate, PEM
	ca     *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

// NewPKI makes a CA valid for an hour.
func NewPKI(tb testing.TB) *PKI {
	tb.Helper()
	p := &PKI{Dir: tb.TempDir(), serial: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cmdhost test CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		tb.Fatal(err)
	}
	p.key = key
	p.CAFile = filepath.Join(p.Dir, "ca.pem")
	writePEM(tb, p.CAFile, "CERTIFICATE", der)
	return p
}

// Server makes a server certificate for 127.0.0.1, ::1 and localhost,
// and returns its certificate and key files.
func (p *PKI) Server(tb testing.TB, name string) (certFile, keyFile string) {
	tb.Helper()
	return p.issue(tb, name, &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
}

// Client makes a client certificate for commonName and returns its
// certificate and key files.
func (p *PKI) Client(tb testing.TB, commonName string) (certFile, keyFile string) {
	tb.Helper()
	return p.issue(tb, commonName, &x509.Certificate{Subject: pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

func (p *PKI) issue(tb testing.TB, name string, tmpl *x509.Certificate) (certFile, keyFile string) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	p.serial++
	tmpl.SerialNumber = big.NewInt(p.serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		tb.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	certFile, keyFile = filepath.Join(p.Dir, name+".pem"), filepath.Join(p.Dir, name+"-key.pem")
	writePEM(tb, certFile, "CERTIFICATE", der)
	writePEM(tb, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}
