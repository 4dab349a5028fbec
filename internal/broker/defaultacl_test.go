package broker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Least privilege by default: a broker that authenticates its clients
// and has no ACL file lets each user call commands and read its own
// replies, nothing more: no #, no other client's replies, no admin op
// (its request carries the admin token), no events, no serving as a host.
func TestDefaultACL(t *testing.T) {
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw")})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("alice: CONNACK 0x%02x", ack.ReasonCode)
	}
	for topic, want := range map[string]byte{
		"rpc/h/echo":                    0,
		"rpc/other/spin":                0,
		"cmdhost/h/admin/list":          notAuthorized,
		"cmdhost/h/replica/r/admin/rm":  notAuthorized,
		"clients/alice-2/rpc/response":  notAuthorized,
		"cmdhost/h/events":              notAuthorized,
		"somewhere/else":                notAuthorized,
		"clients/alice-1/rpc/response2": notAuthorized, // publishing is not reading
	} {
		if got := c.publishCode(t, topic); got != want {
			t.Errorf("publish %s: PUBACK 0x%02x, want 0x%02x", topic, got, want)
		}
	}
	for filter, want := range map[string]byte{
		"clients/alice-1/rpc/response": 1,
		"clients/alice-1/#":            1,
		"#":                            notAuthorized,
		"$share/g/#":                   notAuthorized,
		"clients/+/rpc/response":       notAuthorized,
		"clients/alice-2/rpc/response": notAuthorized,
		"rpc/h/#":                      notAuthorized,
		"cmdhost/+/events":             notAuthorized,
		"cmdhost/+/replicas":           notAuthorized,
	} {
		if got := c.subscribeCode(t, filter); got != want {
			t.Errorf("subscribe %s: SUBACK 0x%02x, want 0x%02x", filter, got, want)
		}
	}
	if !logs.Contains("user=alice") {
		t.Errorf("the refusals are not logged with the user:\n%s", logs.String())
	}
}

// Beside an mTLS listener, the plain listener on loopback admits anyone,
// but under the default ACL an anonymous client calls nothing.
func TestDefaultACLAnonymous(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	e, _ := startWith(t, Config{TLSAddr: "127.0.0.1:0", TLSCertFile: cert, TLSKeyFile: key, TLSClientCAFile: pki.CAFile})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "anon", "alice", ""); ack.ReasonCode != 0 {
		t.Fatalf("anonymous on loopback: CONNACK 0x%02x", ack.ReasonCode)
	}
	if got := c.publishCode(t, "rpc/h/echo"); got != notAuthorized {
		t.Errorf("anonymous call: PUBACK 0x%02x, want 0x87", got)
	}
	if got := c.subscribeCode(t, "#"); got != notAuthorized {
		t.Errorf("anonymous #: SUBACK 0x%02x, want 0x87", got)
	}
	certFile, keyFile := pki.Client(t, "alice")
	m, err := dialTLS(t, e.TLSAddr(), pki, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if ack := m.connectAs(t, "alice-tls", "", ""); ack.ReasonCode != 0 {
		t.Fatalf("alice by certificate: CONNACK 0x%02x", ack.ReasonCode)
	}
	if got := m.publishCode(t, "rpc/h/echo"); got != 0 {
		t.Errorf("alice's call: PUBACK 0x%02x, want 0", got)
	}
}

// A `host ID` line lets a user serve as executor ID: its requests, admin
// ops and replies, and no other executor's.
func TestACLHost(t *testing.T) {
	acl := aclFile(t, "user svc\nhost h1\n")
	e, _ := startWith(t, Config{UsersFile: usersFile(t, "svc", "svc-pw"), ACLFile: acl})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "h1-exec", "svc", "svc-pw"); ack.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
	}
	for filter, want := range map[string]byte{
		"$share/g/rpc/h1/#":              1,
		"rpc/h1/+":                       1,
		"cmdhost/h1/admin/#":             1,
		"cmdhost/h1/replica/r1/admin/#":  1,
		"rpc/h2/#":                       notAuthorized,
		"#":                              notAuthorized,
		"clients/someone/rpc/response":   notAuthorized,
		"cmdhost/+/admin/#":              notAuthorized,
		"cmdhost/h1/replica/+/admin/foo": 1,
	} {
		if got := c.subscribeCode(t, filter); got != want {
			t.Errorf("subscribe %s: SUBACK 0x%02x, want 0x%02x", filter, got, want)
		}
	}
	for topic, want := range map[string]byte{
		"clients/someone/rpc/response": 0,
		"cmdhost/h1/events":            0,
		"cmdhost/h1/replicas":          0,
		"cmdhost/h2/events":            notAuthorized,
		"rpc/h2/echo":                  notAuthorized,
	} {
		if got := c.publishCode(t, topic); got != want {
			t.Errorf("publish %s: PUBACK 0x%02x, want 0x%02x", topic, got, want)
		}
	}
	for _, bad := range []string{"host", "host a/b", "host #", "host a b"} {
		if _, err := ReadACL(aclFile(t, "user svc\n"+bad+"\n")); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// The ACL file is re-read when it changes (replaced by a rename): a grant
// added works without a restart; a version that does not parse keeps the
// grants in force, and the log says why.
func TestACLReload(t *testing.T) {
	acl := aclFile(t, "user alice\ncall rpc/h/echo\n")
	e, logs := startWith(t, Config{UsersFile: usersFile(t, "alice", "alice-pw"), ACLFile: acl})
	c := dialRaw(t, e.Addr())
	if ack := c.connectAs(t, "alice-1", "alice", "alice-pw"); ack.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
	}
	if got := c.publishCode(t, "rpc/h/spin"); got != notAuthorized {
		t.Fatalf("spin before the change: PUBACK 0x%02x", got)
	}
	replace := func(text string) {
		tmp := filepath.Join(filepath.Dir(acl), "acl.new")
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, acl); err != nil {
			t.Fatal(err)
		}
	}
	replace("user alice\ncall rpc/h/echo\ncall rpc/h/spin\n")
	testkit.WaitFor(t, "the new grant in force", func() bool { return c.publishCode(t, "rpc/h/spin") == 0 })
	replace("user alice\ncall echo\n") // bad: not a command topic
	testkit.WaitFor(t, "the bad version logged", func() bool { return logs.Contains("the ACL file changed and is not valid") })
	if got := c.publishCode(t, "rpc/h/spin"); got != 0 {
		t.Errorf("spin after a bad version: PUBACK 0x%02x, want 0 (the grants last read)", got)
	}
	if !logs.Contains("line 2") {
		t.Errorf("the log does not say which line is bad:\n%s", logs.String())
	}
}
