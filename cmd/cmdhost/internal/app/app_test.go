package app

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

func TestInterspersed(t *testing.T) {
	app := New(nil, nil)
	cases := []struct{ in, want string }{
		{"cmdhost call F C -d hi", "cmdhost call -d hi -- F C"},
		{"cmdhost --cache-dir X call F -d=x C", "cmdhost --cache-dir X call -d=x -- F C"},
		{"cmdhost plugin inspect F --json", "cmdhost plugin inspect --json -- F"},
		{"cmdhost call F C -- -d", "cmdhost call -- F C -d"},
		{"cmdhost nosuch a -b", "cmdhost nosuch a -b"},
		{"cmdhost plugin lst --json", "cmdhost plugin lst --json"},
	}
	for _, c := range cases {
		args, err := base.Interspersed(app, strings.Fields(c.in))
		if got := strings.Join(args, " "); got != c.want || err != nil {
			t.Errorf("%q → %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// A flag cmdhost cannot parse gets one line naming the flag, what is
// wrong, an example where one helps and the command's --help, exit
// status 2, not the whole help text.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"invoke", "echo", "--timeout", "5"}, "invoke: --timeout 5: not a duration: give its unit, e.g. --timeout 5s (or 500ms, 2m, 1h) (see cmdhost invoke --help)"},
		{[]string{"serve", "--pool", "many"}, "serve: --pool many: not a whole number (see cmdhost serve --help)"},
		{[]string{"plugin", "list", "--exec-timeout", "3", "dir"}, "plugin list: --exec-timeout 3: not a duration"},
		{[]string{"plugin", "list", "--nosuch"}, "plugin list: unknown flag --nosuch (see cmdhost plugin list --help)"},
		{[]string{"--nosuch"}, "unknown flag --nosuch (see cmdhost --help)"},
	} {
		out, errOut, code := clitest.Run(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "USAGE:") || strings.Count(errOut, "\n") > 1 {
			t.Errorf("%v: stdout %q, stderr %q, status %d; want one line with %q, status 2", c.args, out, errOut, code, c.want)
		}
	}
}
