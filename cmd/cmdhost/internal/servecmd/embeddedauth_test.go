package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

func TestEmbeddedBrokerUsers(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users")
	clitest.AddUser(t, users, "alice", clitest.EmbeddedPassword)
	if b, _ := os.ReadFile(users); strings.Contains(string(b), clitest.EmbeddedPassword) || !strings.HasPrefix(string(b), "alice:$2") {
		t.Fatalf("users file %q: want alice and a bcrypt hash, not the password", b)
	}
	var outputs strings.Builder
	addr, stop := clitest.StartServe(t, nil, "--users", users)
	broker := "mqtt://" + addr
	good, wrong := clitest.SecretFile(t, clitest.EmbeddedPassword), clitest.SecretFile(t, "not-"+clitest.EmbeddedPassword)

	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host", "--username", "alice", "--password-file", good)
	outputs.WriteString(out + errOut)
	if out != "hi" || code != 0 {
		t.Fatalf("invoke as alice: %q %q %d", out, errOut, code)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		// No user name: 0x87, not authorized (the client did not say who
		// it is); a user name with a wrong password or none known: 0x86.
		{"anonymous", nil, "not authorized (0x87)"},
		{"wrong password", []string{"--username", "alice", "--password-file", wrong}, "(user alice): bad user name or password (0x86)"},
		{"unknown user", []string{"--username", "mallory", "--password-file", good}, "(user mallory): bad user name or password (0x86)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host"}, c.args...)
			out, errOut, code := clitest.RunWithin(t, time.Minute, args...)
			outputs.WriteString(out + errOut)
			if code != hostconn.ExitRefused || !strings.Contains(errOut, c.want) {
				t.Fatalf("status %d, stderr %q; want %d and %q", code, errOut, hostconn.ExitRefused, c.want)
			}
			// The broker's reason string says what the code says: not
			// again ("(0x86): bad username or password").
			if line, _, _ := strings.Cut(errOut, "\n"); !strings.HasSuffix(line, c.want[strings.Index(c.want, "(0x"):]) {
				t.Errorf("the refusal repeats itself: %q", line)
			}
		})
	}
	// A user added while serve runs gets in; a removed one no longer.
	clitest.AddUser(t, users, "bob", clitest.EmbeddedPassword+"-bob")
	bobPw := clitest.SecretFile(t, clitest.EmbeddedPassword+"-bob")
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "bob", "--broker", broker, "--executor", "cli-host", "--username", "bob", "--password-file", bobPw); out != "bob" || code != 0 {
		t.Fatalf("invoke as bob, added while serving: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, "user", "remove", "bob", "--users", users); code != 0 {
		t.Fatalf("user remove bob: %q %q %d", out, errOut, code)
	}
	if _, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "bob", "--broker", broker, "--executor", "cli-host", "--username", "bob", "--password-file", bobPw); code != hostconn.ExitRefused || !strings.Contains(errOut, "0x86") {
		t.Fatalf("invoke as bob, removed: %q %d; want refused with 0x86", errOut, code)
	}
	log, _ := stop()
	outputs.WriteString(log)
	// Each refused login is one line of serve's log: four refused, four
	// lines, none of mochi's with an empty message.
	if n := strings.Count(log, "client refused:"); n != 4 || strings.Contains(log, `msg=""`) {
		t.Errorf("serve logged %d refusals for 4 refused logins (or a line without a message):\n%s", n, log)
	}
	for _, want := range []string{"client refused: no user name", "client refused: unknown user or wrong password", "user=mallory", "remote=127.0.0.1:"} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(outputs.String(), clitest.EmbeddedPassword) {
		t.Errorf("a password is in the output:\n%s", outputs.String())
	}
}

func TestEmbeddedBrokerTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	users := filepath.Join(t.TempDir(), "users")
	clitest.AddUser(t, users, "alice", clitest.EmbeddedPassword)
	good := clitest.SecretFile(t, clitest.EmbeddedPassword)
	tlsAddr := clitest.FreeAddr(t)
	clitest.StartServe(t, nil, "--users", users, "--listen-tls", tlsAddr, "--listen-cert", cert, "--listen-key", key)
	broker := "mqtts://" + tlsAddr

	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "over tls", "--broker", broker, "--executor", "cli-host",
		"--tls-ca", pki.CAFile, "--username", "alice", "--password-file", good)
	if out != "over tls" || code != 0 {
		t.Fatalf("invoke over TLS: %q %q %d", out, errOut, code)
	}
	if _, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", broker, "--executor", "cli-host", "--username", "alice", "--password-file", good); code != hostconn.ExitRefused || !strings.Contains(errOut, "certificate signed by unknown authority") {
		t.Fatalf("invoke without --tls-ca: %q %d; want refused for the unknown CA", errOut, code)
	}
}

func TestEmbeddedBrokerMutualTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "broker")
	clientCert, clientKey := pki.Client(t, "alice")
	tlsAddr := clitest.FreeAddr(t)
	// Off loopback (all interfaces): the client CA is what lets it start.
	tlsListen := strings.Replace(tlsAddr, "127.0.0.1", "0.0.0.0", 1)
	clitest.StartServe(t, nil, "--listen-tls", tlsListen, "--listen-cert", cert, "--listen-key", key, "--listen-client-ca", pki.CAFile)
	broker := "mqtts://" + tlsAddr

	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "mtls", "--broker", broker, "--executor", "cli-host",
		"--tls-ca", pki.CAFile, "--tls-cert", clientCert, "--tls-key", clientKey)
	if out != "mtls" || code != 0 {
		t.Fatalf("invoke with alice's certificate: %q %q %d", out, errOut, code)
	}
	if _, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", broker, "--executor", "cli-host", "--tls-ca", pki.CAFile); code != hostconn.ExitRefused || !strings.Contains(errOut, "tls: certificate required") || !strings.Contains(errOut, "--tls-cert FILE") {
		t.Fatalf("invoke without a client certificate: %q %d; want refused (%d), the TLS alert and the fix", errOut, code, hostconn.ExitRefused)
	}
}

func TestEmbeddedBrokerOffLoopbackNeedsAuth(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "--listen 0.0.0.0:0 is reachable from other machines and would admit anyone: give --users FILE"},
		{[]string{"--listen-tls", "0.0.0.0:0", "--listen-cert", "c", "--listen-key", "k"}, "or --listen-client-ca FILE"},
		{[]string{"--listen-tls", "127.0.0.1:0"}, "--listen-tls 127.0.0.1:0 needs the listener's certificate and key"},
		{[]string{"--listen-cert", "c"}, "give --listen-tls ADDR too"},
		{[]string{"--users", "/nonexistent/users"}, "--users: users file: stat /nonexistent/users: no such file or directory (add a user with `cmdhost user add NAME --users /nonexistent/users`)"},
		{[]string{"--broker", "mqtt://127.0.0.1:1", "--users", "u"}, "are the embedded broker's"},
		{[]string{"--trust-broker-identity"}, "--trust-broker-identity is for a replica on another cmdhost's embedded broker (--broker URL)"},
		{[]string{"--caller-topic-token", "caller"}, "--caller-topic-token is for an external broker"},
		{[]string{"--broker", "mqtt://127.0.0.1:1", "--caller-topic-token", "caller", "--trust-broker-identity"}, "name two sources of the caller"},
		{[]string{"--broker", "mqtt://127.0.0.1:1", "--caller-topic-token", "commandName"}, "give the name of a {token} level"},
		{[]string{"--broker", "mqtt://127.0.0.1:1", "--caller-topic-token", "a/b"}, "give the name of a {token} level"},
	} {
		_, errOut, code := clitest.Run(t, append([]string{"serve", "--plugins", t.TempDir(), "--listen", clitest.FreeAddr(t)}, c.args...)...)
		if code != base.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %v: status %d, stderr %q; want %d and %q", c.args, code, errOut, base.ExitUsage, c.want)
		}
		if strings.Contains(c.want, "reachable") && !strings.Contains(errOut, "--allow-anonymous") {
			t.Errorf("serve %v: %q does not name --allow-anonymous", c.args, errOut)
		}
	}
	// Said so, it starts.
	clitest.StartServe(t, nil, "--listen", "0.0.0.0:0", "--allow-anonymous")
}

// user add/remove: the password from --password-file or standard input,
// never printed; bad input is a usage error that names the fix.
func TestUserCommand(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users")
	out, errOut, code := clitest.Run(t, "user", "add", "carol", "--users", users, "--password-file", clitest.SecretFile(t, clitest.EmbeddedPassword))
	if code != 0 || !strings.Contains(errOut, "user carol set in "+users) || strings.Contains(out+errOut, clitest.EmbeddedPassword) {
		t.Fatalf("user add --password-file: %q %q %d", out, errOut, code)
	}
	if st, err := os.Stat(users); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("users file: %v %v; want mode 0600", st, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "add", "dave", "--users", users}, "no password: give it on standard input"}, // standard input empty
		{[]string{"user", "add", "a:b", "--users", users}, `user name "a:b" holds a colon`},
		{[]string{"user", "add", "--users", users}, "give one user name (got 0 arguments)"},
		{[]string{"user", "add", "dave"}, "--users FILE is required"},
		{[]string{"user", "add", "dave", "--users", users, "--password-file", "/nonexistent/pw"}, "--password-file: secret file: stat /nonexistent/pw"},
		{[]string{"user", "remove", "dave", "--users", users}, "no user dave in " + users},
	} {
		if _, errOut, code := clitest.Run(t, c.args...); code != base.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, code, errOut, base.ExitUsage, c.want)
		}
	}
	if _, errOut, code := clitest.Run(t, "user", "remove", "carol", "--users", users); code != 0 || !strings.Contains(errOut, "user carol removed") {
		t.Fatalf("user remove carol: %q %d", errOut, code)
	}
	if b, _ := os.ReadFile(users); len(b) != 0 {
		t.Fatalf("users file after removing its one user: %q", b)
	}
}
