package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Logging in with a Kubernetes service account token (K8S-SAT), as on the
// Azure IoT Operations broker: the embedded broker, started by the test
// as a SAT-checking broker, stands for it; serve and invoke are the real
// binary with --sat-file.

const satAudience = broker.DefaultSATAudience

func TestSATLoginAndRotation(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	iss := testkit.NewIssuer(t)
	// Who may do what: the executor's account serves as cli-host, the
	// invoker's calls echo (without an ACL file the broker's default
	// lets nobody serve).
	acl := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(acl, []byte("user system:serviceaccount:cmdhost:executor\nhost cli-host\n"+
		"user system:serviceaccount:cmdhost:invoker\ncall rpc/cli-host/echo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0", SATKeyFile: iss.KeyFile, ACLFile: acl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	url := e.URL().String()
	dir := t.TempDir()
	token := func(name, subject string, exp time.Time) string {
		p := filepath.Join(dir, name)
		testkit.WriteToken(t, p, iss.Token(t, subject, satAudience, exp, nil))
		return p
	}
	now := time.Now()
	execToken := token("exec.token", "system:serviceaccount:cmdhost:executor", now.Add(time.Hour))
	invokeToken := token("invoke.token", "system:serviceaccount:cmdhost:invoker", now.Add(time.Hour))

	var said sync.Map // the lines serve logs that the test waits for
	_, stop := clitest.StartServe(t, func(line string) {
		for _, m := range []string{"re-authenticated with the new token", "refused the new token"} {
			if strings.Contains(line, m) {
				said.Store(m, true)
			}
		}
	}, "--broker", url, "--sat-file", execToken)
	logged := func(m string) bool { _, ok := said.Load(m); return ok }
	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", url, "--executor", "cli-host", "--sat-file", invokeToken)
	if out != "hi" || code != 0 {
		t.Fatalf("invoke with a token: %q %q %d", out, errOut, code)
	}
	before := e.SATStats()
	serveLogins := before.Logins - 1 // the invoke's was one
	if serveLogins < 1 || before.Refused != 0 {
		t.Fatalf("after serve and one invoke: %+v", before)
	}

	// The token rotates (kubelet renames a new file over it): each of
	// serve's connections sends it on the live connection, and none
	// connects again.
	testkit.WriteToken(t, execToken, iss.Token(t, "system:serviceaccount:cmdhost:executor", satAudience, now.Add(2*time.Hour), nil))
	testkit.WaitFor(t, "serve's connections re-authenticated with the new token", func() bool {
		return e.SATStats().Reauthentications == serveLogins
	})
	out, errOut, code = clitest.Run(t, "invoke", "echo", "-d", "after rotation", "--broker", url, "--executor", "cli-host", "--sat-file", invokeToken)
	if out != "after rotation" || code != 0 {
		t.Fatalf("invoke after the rotation: %q %q %d", out, errOut, code)
	}
	if got := e.SATStats(); got.Logins != before.Logins+1 || got.Refused != 0 {
		t.Fatalf("after the rotation: %+v; want %d logins (serve did not reconnect; one invoke more), none refused", got, before.Logins+1)
	}

	// Refused tokens: refused at once, exit 7, saying so.
	other := testkit.NewIssuer(t)
	for name, tok := range map[string]string{
		"expired":        iss.Token(t, "system:serviceaccount:cmdhost:invoker", satAudience, now.Add(-time.Minute), nil),
		"other issuer":   other.Token(t, "system:serviceaccount:cmdhost:invoker", satAudience, now.Add(time.Hour), nil),
		"other audience": iss.Token(t, "system:serviceaccount:cmdhost:invoker", "https://kubernetes.default.svc", now.Add(time.Hour), nil),
		"not a token":    "hunter2",
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "token")
			testkit.WriteToken(t, p, tok)
			_, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "-d", "hi", "--broker", url, "--executor", "cli-host", "--sat-file", p)
			if code != hostconn.ExitRefused || !strings.Contains(errOut, "not authorized (0x87)") || !strings.Contains(errOut, "K8S-SAT") || !strings.Contains(errOut, "--sat-file") {
				t.Fatalf("status %d, stderr %q; want %d, not authorized (0x87), K8S-SAT and a hint naming --sat-file", code, errOut, hostconn.ExitRefused)
			}
			if strings.Contains(errOut, tok) {
				t.Fatalf("the token is in the output: %q", errOut)
			}
		})
	}

	// serve refused at its first connection ends at once, exit 7.
	expired := filepath.Join(t.TempDir(), "expired.token")
	testkit.WriteToken(t, expired, iss.Token(t, "system:serviceaccount:cmdhost:executor", satAudience, now.Add(-time.Minute), nil))
	if _, errOut, code := clitest.RunWithin(t, 2*time.Minute, "serve", "--plugins", clitest.Plugins, "--id", "refused-host", "--broker", url, "--sat-file", expired); code != hostconn.ExitRefused || !strings.Contains(errOut, "not authorized (0x87)") {
		t.Errorf("serve with an expired token: exit %d, %q; want %d and not authorized (0x87)", code, errOut, hostconn.ExitRefused)
	}

	// A new token that the broker refuses ends the connection: serve says
	// so, and the broker refuses it again when serve reconnects with it.
	refused := e.SATStats().Refused
	testkit.WriteToken(t, execToken, iss.Token(t, "system:serviceaccount:cmdhost:executor", satAudience, now.Add(-time.Second), nil))
	testkit.WaitFor(t, "the expired token refused on the live connection", func() bool { return e.SATStats().Refused > refused })
	testkit.WaitFor(t, "serve saying it re-authenticated, and that the broker refused the expired token", func() bool {
		return logged("re-authenticated with the new token") && logged("refused the new token")
	})
	log, _ := stop()
	for _, leak := range []string{"eyJ"} { // every JWT starts so
		if strings.Contains(log, leak) {
			t.Errorf("a token is in serve's log:\n%s", log)
		}
	}
}

// The token flags' usage errors: exit 2, naming the flag.
func TestSATUsage(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	testkit.WriteToken(t, tok, "header.payload.signature")
	pw := clitest.SecretFile(t, "pw")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--plugins", dir, "--listen", "127.0.0.1:0", "--sat-key", filepath.Join(dir, "none")}, "--sat-key: keys file"},
		{[]string{"serve", "--plugins", dir, "--listen", "127.0.0.1:0", "--sat-key", tok}, "--sat-key: keys file"},
		{[]string{"serve", "--plugins", dir, "--listen", "127.0.0.1:0", "--sat-audience", "x"}, "give --sat-key FILE too"},
		{[]string{"serve", "--plugins", dir, "--broker", "mqtt://127.0.0.1:1", "--sat-key", tok}, "are the embedded broker's"},
		{[]string{"serve", "--plugins", dir, "--listen", "127.0.0.1:0", "--sat-file", tok}, "are for an external broker"},
		{[]string{"invoke", "echo", "--broker", "mqtt://127.0.0.1:1", "--sat-file", tok, "--password-file", pw}, "--sat-file and --password-file are two ways"},
		{[]string{"invoke", "echo", "--broker", "mqtt://127.0.0.1:1", "--sat-file", filepath.Join(dir, "none")}, "the token file (K8S-SAT)"},
	} {
		_, errOut, code := clitest.Run(t, c.args...)
		if code != base.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errOut, base.ExitUsage, c.want)
		}
	}
}
