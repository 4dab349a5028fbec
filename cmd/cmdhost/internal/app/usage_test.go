package app

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// oneUsageLine fails t unless cmdhost args printed nothing on stdout and
// one line on stderr that contains want, exit status 2: a usage error,
// not the help text and not status 0 or 1.
func oneUsageLine(t *testing.T, want string, args ...string) {
	t.Helper()
	out, errOut, code := clitest.Run(t, args...)
	if code != base.ExitUsage || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("cmdhost %s: stdout %q, stderr %q, status %d; want one line with %q, status 2",
			strings.Join(args, " "), out, errOut, code, want)
	}
}

// A misspelt command, at the top or under plugin, is named with the
// command it most likely meant, exit status 2; it printed the whole help
// and exited 0.
func TestUnknownCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"invok", "echo", "-d", "hi"}, `cmdhost: unknown command "invok": did you mean "invoke"? (see cmdhost --help)`},
		{[]string{"plugins", "list"}, `unknown command "plugins": did you mean "plugin"?`},
		{[]string{"plugin", "lst"}, `cmdhost: unknown command "plugin lst": did you mean "plugin list"? (see cmdhost plugin --help)`},
		{[]string{"plugin", "lst", "--json"}, `unknown command "plugin lst": did you mean "plugin list"?`},
		{[]string{"--cache-dir", t.TempDir(), "serv"}, `unknown command "serv": did you mean "serve"?`},
		{[]string{"xyzzy"}, `unknown command "xyzzy": cmdhost has serve, invoke, publish, call, plugin,`},
		{[]string{"plugin", "frobnicate"}, `unknown command "plugin frobnicate": cmdhost plugin has inspect, validate, list,`},
		// help's unknown topic: it exited 3, the status of "no broker".
		{[]string{"help", "invok"}, `unknown command "invok": did you mean "invoke"?`},
		{[]string{"plugin", "help", "lst"}, `unknown command "plugin lst": did you mean "plugin list"?`},
	} {
		oneUsageLine(t, c.want, c.args...)
	}
	// The help is still there for who asks for it.
	for _, args := range [][]string{{}, {"plugin"}, {"--help"}, {"-h"}, {"help"}, {"help", "invoke"}, {"plugin", "help", "list"}, {"invoke", "--help"}} {
		if out, errOut, code := clitest.Run(t, args...); code != 0 || !strings.Contains(out, "USAGE:") {
			t.Errorf("cmdhost %v: status %d, stdout %q, stderr %q; want the help", args, code, out, errOut)
		}
	}
}

// A flag that takes a value given last, without it, is a usage error
// that names the flag; it took "--" for its value (invoke sent the
// payload "--", exit 0; -f opened a file called "--").
func TestFlagWithoutValue(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"invoke", "echo", "-d"}, "invoke: -d (--data) needs a value: request payload (see cmdhost invoke --help)"},
		{[]string{"invoke", "echo", "-f"}, "invoke: -f (--file) needs a value"},
		{[]string{"call", clitest.Plugins + "/echo.wasm", "echo", "--file"}, "call: --file needs a value"},
		{[]string{"invoke", "echo", "--timeout"}, "invoke: --timeout needs a value"},
		{[]string{"plugin", "list", "--executor"}, "plugin list: --executor needs a value"},
		{[]string{"--cache-dir"}, "--cache-dir needs a value (see cmdhost --help)"},
	} {
		oneUsageLine(t, c.want, c.args...)
	}
}

// dev and plugin install without --plugins say so in one line, exit
// status 2; they exited 1, dev after the whole help.
func TestMissingRequiredFlag(t *testing.T) {
	oneUsageLine(t, "dev: --plugins DIR is required: plugins DIR of the host (or $CMDHOST_PLUGINS) (see cmdhost dev --help)", "dev", "--once")
	oneUsageLine(t, "plugin install: --plugins DIR is required", "plugin", "install", clitest.Plugins+"/echo.wasm")
}

// An --executor that cannot be a topic level is a usage error before
// anything is sent; with a wildcard it exited 1 (the publish failed).
func TestExecutorNotATopicLevel(t *testing.T) {
	for _, args := range [][]string{
		{"invoke", "echo", "--executor", "v+m"},
		{"plugin", "list", "--executor", "a/b"},
		{"watch", "--executor", "#"},
	} {
		oneUsageLine(t, "--executor "+`"`+args[len(args)-1]+`": not an executor id`, args...)
	}
}

// version says whose version it prints: this binary's, not a running
// host's (the README said "what is running").
func TestVersionSaysWhoseVersion(t *testing.T) {
	out, _, code := clitest.Run(t, "version", "--help")
	if code != 0 || !strings.Contains(out, "print the version of this cmdhost binary") || !strings.Contains(out, "may be another version") {
		t.Errorf("version --help:\n%s", out)
	}
}
