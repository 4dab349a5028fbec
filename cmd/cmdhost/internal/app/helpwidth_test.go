package app

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/servecmd"
)

// TestHelpFitsAndIsGrouped: every command's --help, as the binary prints
// it, fits helpWidth columns (serve's had lines of 650 characters), and
// serve's shows its flags under the headings of their concerns, in
// serveCategoryOrder, each flag once, --session-expiry with one default.
func TestHelpFitsAndIsGrouped(t *testing.T) {
	var paths [][]string
	app := New(nil, nil)
	for _, c := range app.Commands {
		paths = append(paths, []string{c.Name})
		for _, sub := range c.Subcommands {
			paths = append(paths, []string{c.Name, sub.Name})
		}
	}
	paths = append(paths, nil) // cmdhost --help
	for _, p := range paths {
		out, errOut, code := clitest.Run(t, append(slices.Clone(p), "--help")...)
		if code != 0 {
			t.Fatalf("cmdhost %v --help: status %d: %s", p, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > base.HelpWidth {
				t.Errorf("cmdhost %v --help, line %d is %d columns (at most %d):\n%s", p, i+1, n, base.HelpWidth, line)
			}
		}
	}

	out, _, _ := clitest.Run(t, "serve", "--help")
	var headings []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "   ") && !strings.HasPrefix(line, "    ") && strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "   -") {
			headings = append(headings, strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
	}
	if want := servecmd.ServeCategoryOrder[1:]; !slices.Equal(headings, want) {
		t.Errorf("serve --help's headings are %q; want %q", headings, want)
	}
	for _, f := range servecmd.ServeFlags() {
		name := "--" + f.Names()[0] + " "
		if n := strings.Count(out+" ", "\n   "+name) + strings.Count(out, "\n   "+strings.TrimSpace(name)+"\n"); n != 1 {
			t.Errorf("serve --help shows %s %d times; want once", name, n)
		}
	}
	at := strings.Index(out, "--session-expiry")
	entry := out[at : at+strings.Index(out[at:], "]")]
	if n := strings.Count(entry, "default"); n != 1 {
		t.Errorf("--session-expiry's help says default %d times; want once:\n%s", n, entry)
	}
	// Flags are under their heading: the paragraph the heading starts.
	for flag, cat := range map[string]string{"--listen-tls": servecmd.CatEmbedSec, "--otlp-endpoint": servecmd.CatObserve, "--store": servecmd.CatStore, "--session-expiry": servecmd.CatBroker, "--max-guest-memory": servecmd.CatLimits} {
		found := false
		for _, para := range strings.Split(out, "\n\n") {
			if strings.HasPrefix(para, "   "+cat+":\n") && strings.Contains(para, "\n   "+flag+" ") {
				found = true
			}
		}
		if !found {
			t.Errorf("serve --help does not show %s under %q", flag, cat)
		}
	}
}
