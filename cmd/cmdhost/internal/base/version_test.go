package base

import (
	"strings"
	"testing"
)

// The version line is the one `cmdhost hosts` shows: a tagged release as
// it is, a build between releases as "dev (COMMIT, DATE)", never the raw
// pseudo-version (issue 39).
func TestVersionPrintsItReadably(t *testing.T) {
	for _, c := range []struct {
		v    BuildVersion
		want string
	}{
		{BuildVersion{Version: "v0.0.0-20261126194512-334c5f878fa2", Commit: "334c5f878fa2aa"}, "cmdhost dev (334c5f8, 2026-11-26)\ncommit  334c5f878fa2aa\n"},
		{BuildVersion{Version: "v1.2.0", Commit: "334c5f878fa2aa"}, "cmdhost v1.2.0\ncommit  334c5f878fa2aa\n"},
		{BuildVersion{Version: "(devel)", Commit: "334c5f878fa2aa", Time: "2026-11-26T19:45:12Z", Modified: true}, "cmdhost dev (334c5f8, 2026-11-26, modified)\ncommit  334c5f878fa2aa (with uncommitted changes)\n"},
	} {
		var b strings.Builder
		c.v.Print(&b)
		if !strings.HasPrefix(b.String(), c.want) {
			t.Errorf("%+v printed\n%s\nwant it to begin\n%s", c.v, b.String(), c.want)
		}
	}
}
