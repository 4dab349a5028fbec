package broker

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/passwd"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// connectAs sends a CONNECT as id with user and password (none if "")
// and returns the CONNACK.
func (c *rawClient) connectAs(t *testing.T, id, user, password string) packets.Packet {
	t.Helper()
	c.write(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: id,
			UsernameFlag: user != "", Username: []byte(user), PasswordFlag: password != "", Password: []byte(password)},
	})
	ack, err := c.read(t)
	if err != nil {
		t.Fatalf("%s: reading CONNACK: %v", id, err)
	}
	if ack.FixedHeader.Type != packets.Connack {
		t.Fatalf("%s: got packet type %d, want CONNACK", id, ack.FixedHeader.Type)
	}
	return ack
}

func usersFile(t *testing.T, userPasswords ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users")
	for i := 0; i < len(userPasswords); i += 2 {
		if err := passwd.Set(path, userPasswords[i], userPasswords[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// With a users file, a client without a user name is refused with 0x87
// (not authorized: it did not say who it is), one with a wrong password
// or an unknown name with 0x86 (bad user name or password), each logged
// with its address, client id and user name, never the password; a user
// gets in, the host's in-process clients without credentials; a user
// added to the file gets in without a restart.
func TestUsersFile(t *testing.T) {
	path := usersFile(t, "alice", "alice-pw")
	e, logs := startWith(t, Config{UsersFile: path})

	for _, c := range []struct {
		id, user, password string
		want               packets.Code
	}{
		{"anon", "", "", packets.ErrNotAuthorized},
		{"wrong", "alice", "not-alice-pw", packets.ErrBadUsernameOrPassword},
		{"unknown", "mallory", "alice-pw", packets.ErrBadUsernameOrPassword},
	} {
		raw := dialRaw(t, e.Addr())
		if ack := raw.connectAs(t, c.id, c.user, c.password); ack.ReasonCode != c.want.Code {
			t.Fatalf("%s: CONNACK 0x%02x, want 0x%02x", c.id, ack.ReasonCode, c.want.Code)
		}
		wantClosedByBroker(t, raw, c.id)
		if !logs.Contains("client="+c.id) || !logs.Contains("remote="+raw.conn.LocalAddr().String()) {
			t.Errorf("the refusal of %s is not logged with its id and address:\n%s", c.id, logs)
		}
	}
	if !logs.Contains("user=mallory") || logs.Contains("alice-pw") {
		t.Errorf("refusals not logged with the user name, or logged with the password:\n%s", logs)
	}
	if got := e.Stats().ClientsRefused; got != 3 {
		t.Errorf("ClientsRefused %d, want 3", got)
	}
	if ack := dialRaw(t, e.Addr()).connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x, want 0", ack.ReasonCode)
	}
	ctx := testCtx(t)
	connectWith(t, ctx, e.URL(), inProcessDialer(e), "host-exec", "cmd/#") // fails the test unless it gets in

	if err := passwd.Set(path, "bob", "bob-pw"); err != nil {
		t.Fatal(err)
	}
	if ack := dialRaw(t, e.Addr()).connectAs(t, "bob-1", "bob", "bob-pw"); ack.ReasonCode != 0 {
		t.Fatalf("bob, added while the broker ran: CONNACK 0x%02x, want 0", ack.ReasonCode)
	}
}

// dialTLS opens a TLS connection to addr trusting the PKI's CA, with the
// client certificate (certFile, keyFile) if given.
func dialTLS(t *testing.T, addr string, pki *testkit.PKI, certFile, keyFile string) (*rawClient, error) {
	t.Helper()
	pem, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawClient{conn: c, r: bufio.NewReader(c)}, nil
}

// The TLS listener serves MQTT over TLS with the users file's rules
// (no client CA), and the plain listener keeps serving.
func TestTLSListener(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	e, _ := startWith(t, Config{TLSAddr: "127.0.0.1:0", TLSCertFile: cert, TLSKeyFile: key,
		UsersFile: usersFile(t, "alice", "alice-pw")})
	if e.TLSAddr() == "" {
		t.Fatal("no TLS address")
	}
	c, err := dialTLS(t, e.TLSAddr(), pki, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectAs(t, "tls-anon", "", ""); ack.ReasonCode != packets.ErrNotAuthorized.Code {
		t.Fatalf("anonymous over TLS: CONNACK 0x%02x, want 0x87", ack.ReasonCode)
	}
	c, err = dialTLS(t, e.TLSAddr(), pki, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectAs(t, "tls-alice", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice over TLS: CONNACK 0x%02x, want 0", ack.ReasonCode)
	}
	// Under the default ACL (a users file, no ACL file) a client may
	// subscribe under its own prefix: MQTT works over TLS.
	c.subscribe(t, "clients/tls-alice/#", 1)
	// Plain MQTT on the TLS port is no MQTT there.
	plain := dialRaw(t, e.TLSAddr())
	plain.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: "plain"}})
	wantClosedByBroker(t, plain, "plain MQTT on the TLS listener")
}

// With a client CA, the TLS listener requires a certificate it signed
// (a client without one, or with one from another CA, fails the
// handshake, logged with its address); the certificate's common name is
// the user name, a password is not needed, and a CONNECT naming another
// user is refused with 0x86.
func TestMutualTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	e, logs := startWith(t, Config{TLSAddr: "127.0.0.1:0", TLSCertFile: cert, TLSKeyFile: key,
		TLSClientCAFile: pki.CAFile, UsersFile: usersFile(t, "alice", "alice-pw")})

	wantRefused := func(what, certFile, keyFile string) {
		t.Helper()
		c, err := dialTLS(t, e.TLSAddr(), pki, certFile, keyFile)
		if err == nil { // TLS 1.3: the client learns of the refusal at its first read
			c.write(t, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect},
				Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: what}})
			_, err = c.read(t)
		}
		if err == nil {
			t.Fatalf("%s: connected", what)
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the broker did not close the connection: %v", what, err)
		}
	}
	wantRefused("no-cert", "", "")
	other := testkit.NewPKI(t)
	otherCert, otherKey := other.Client(t, "alice")
	wantRefused("other-ca", otherCert, otherKey)
	if !logs.Contains("TLS handshake failed") || !logs.Contains("remote=127.0.0.1:") {
		t.Errorf("failed handshakes not logged with the address:\n%s", logs)
	}

	aliceCert, aliceKey := pki.Client(t, "alice")
	c, err := dialTLS(t, e.TLSAddr(), pki, aliceCert, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectAs(t, "mtls-alice", "", ""); ack.ReasonCode != 0 {
		t.Fatalf("alice's certificate, no password: CONNACK 0x%02x, want 0", ack.ReasonCode)
	}
	c, err = dialTLS(t, e.TLSAddr(), pki, aliceCert, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectAs(t, "mtls-bob", "bob", "alice-pw"); ack.ReasonCode != packets.ErrBadUsernameOrPassword.Code {
		t.Fatalf("alice's certificate naming bob: CONNACK 0x%02x, want 0x86", ack.ReasonCode)
	}
	c, err = dialTLS(t, e.TLSAddr(), pki, aliceCert, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if ack := c.connectSAT(t, "mtls-sat", SATMethod, "not-a-token"); ack.ReasonCode != packets.ErrBadAuthenticationMethod.Code {
		t.Fatalf("alice's certificate naming K8S-SAT: CONNACK 0x%02x, want 0x8C", ack.ReasonCode)
	}
	// The plain listener still wants a user of the users file.
	if ack := dialRaw(t, e.Addr()).connectAs(t, "plain-anon", "", ""); ack.ReasonCode != packets.ErrNotAuthorized.Code {
		t.Fatalf("anonymous on the plain listener: CONNACK 0x%02x, want 0x87", ack.ReasonCode)
	}
}

// A listener that others can reach and that would admit anyone is
// refused, its error naming both ways out; on loopback, or with users,
// a client CA (for the TLS listener) or AllowAnonymous, it starts.
func TestCheckAccess(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string // "" : allowed
	}{
		{Config{Addr: "127.0.0.1:1883"}, ""},
		{Config{Addr: "localhost:1883"}, ""},
		{Config{Addr: "[::1]:1883"}, ""},
		{Config{Addr: "0.0.0.0:1883"}, "--listen 0.0.0.0:1883 is reachable from other machines"},
		{Config{Addr: ":1883"}, "--listen :1883"},
		{Config{Addr: "192.0.2.1:1883"}, "--listen 192.0.2.1"},
		{Config{Addr: "example.com:1883"}, "--listen example.com"},
		{Config{Addr: "0.0.0.0:1883", UsersFile: "u"}, ""},
		{Config{Addr: "0.0.0.0:1883", AllowAnonymous: true}, ""},
		{Config{Addr: "127.0.0.1:1883", TLSAddr: "0.0.0.0:8883"}, "--listen-tls 0.0.0.0:8883"},
		{Config{Addr: "127.0.0.1:1883", TLSAddr: "0.0.0.0:8883", TLSClientCAFile: "ca"}, ""},
		{Config{Addr: "0.0.0.0:1883", TLSAddr: "0.0.0.0:8883", TLSClientCAFile: "ca"}, "--listen 0.0.0.0:1883"},
	} {
		err := c.cfg.CheckAccess()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "--users FILE") || !strings.Contains(err.Error(), "--allow-anonymous")):
			t.Errorf("%+v: error %v; want it to say %q and name --users FILE and --allow-anonymous", c.cfg, err, c.want)
		}
	}
	if _, err := Start(Config{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("an anonymous broker started on 0.0.0.0")
	}
	e, err := Start(Config{Addr: "0.0.0.0:0", AllowAnonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
}
