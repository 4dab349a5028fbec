package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
)

// serve --acl: a user granted echo calls echo and is refused any other
// command (exit 7, the broker's PUBACK 0x87); the admin ops are the admin
// user's; the ACL file is checked at the start.
func TestEmbeddedBrokerACL(t *testing.T) {
	dir := t.TempDir()
	users, acl := filepath.Join(dir, "users"), filepath.Join(dir, "acl")
	clitest.AddUser(t, users, "operator", clitest.EmbeddedPassword)
	clitest.AddUser(t, users, "root", clitest.EmbeddedPassword)
	if err := os.WriteFile(acl, []byte("user operator\ncall rpc/cli-host/echo\n\nuser root\ncall rpc/cli-host/#\nadmin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, stop := clitest.StartServe(t, nil, "--users", users, "--acl", acl)
	pw := clitest.SecretFile(t, clitest.EmbeddedPassword)
	as := func(user string, args ...string) []string {
		return append(args, "--broker", "mqtt://"+addr, "--executor", "cli-host", "--username", user, "--password-file", pw)
	}

	if out, errOut, code := clitest.Run(t, as("operator", "invoke", "echo", "-d", "hi")...); out != "hi" || code != 0 {
		t.Fatalf("operator calling echo: %q %q %d", out, errOut, code)
	}
	_, errOut, code := clitest.Run(t, as("operator", "invoke", "fail", "-d", "x")...)
	if code != hostconn.ExitRefused || !strings.Contains(errOut, "rpc/cli-host/fail") || !strings.Contains(errOut, "0x87") {
		t.Errorf("operator calling fail: status %d, stderr %q; want %d, the topic and 0x87", code, errOut, hostconn.ExitRefused)
	}
	if out, errOut, code := clitest.Run(t, as("operator", "plugin", "list")...); code != hostconn.ExitRefused || strings.Contains(out, "echo") ||
		!strings.Contains(errOut, "cmdhost/cli-host/admin/") || !strings.Contains(errOut, "not authorized (0x87)") {
		t.Errorf("operator running plugin list: %q %q %d; want refused: not authorized (0x87) on an admin topic", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, as("root", "plugin", "list")...); code != 0 || !strings.Contains(out, "echo") {
		t.Errorf("root running plugin list: %q %q %d", out, errOut, code)
	}
	if out, errOut, code := clitest.Run(t, as("root", "invoke", "echo", "-d", "root")...); out != "root" || code != 0 {
		t.Errorf("root calling echo: %q %q %d", out, errOut, code)
	}
	log, _ := stop()
	for _, want := range []string{"publish refused: the ACL file grants it no such topic", "user=operator", "topic=rpc/cli-host/fail"} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
}

// --acl needs users or client certificates, and a file that reads.
func TestEmbeddedBrokerACLUsage(t *testing.T) {
	dir := t.TempDir()
	users, acl, bad := filepath.Join(dir, "users"), filepath.Join(dir, "acl"), filepath.Join(dir, "bad")
	clitest.AddUser(t, users, "operator", clitest.EmbeddedPassword)
	if err := os.WriteFile(acl, []byte("user operator\ncall rpc/h/echo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("user operator\ncall echo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--acl", acl}, "give --users FILE, --listen-client-ca FILE or --sat-key FILE"},
		{[]string{"--acl", bad, "--users", users}, "line 2"},
		{[]string{"--acl", filepath.Join(dir, "none"), "--users", users}, "--acl: ACL file"},
	} {
		args := append([]string{"serve", "--plugins", dir, "--listen", "127.0.0.1:0", "--id", "h"}, c.args...)
		_, errOut, code := clitest.Run(t, args...)
		if code != base.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %v: status %d, stderr %q; want %d and %q", c.args, code, errOut, base.ExitUsage, c.want)
		}
	}
}
