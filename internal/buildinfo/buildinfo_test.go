package buildinfo

import "testing"

// TestShort: hosts shows a release's tag as it is and any other build as
// dev with its short commit and date, never a pseudo-version (issue 39).
func TestShort(t *testing.T) {
	for _, c := range []struct {
		v    Version
		want string
	}{
		{Version{Version: "v0.0.0-20261126194512-334c5f878fa2"}, "dev (334c5f8, 2026-11-26)"},
		{Version{Version: "v0.0.0-20261126194512-334c5f878fa2+dirty"}, "dev (334c5f8, 2026-11-26, modified)"},
		{Version{Version: "v1.2.1-0.20261126194512-334c5f878fa2"}, "dev (334c5f8, 2026-11-26)"},
		{Version{Version: "v1.2.0"}, "v1.2.0"},
		{Version{Version: "v1.2.0+dirty"}, "v1.2.0 modified"},
		{Version{Version: "(devel)", Commit: "334c5f878fa2aa", Time: "2026-11-26T19:45:12Z"}, "dev (334c5f8, 2026-11-26)"},
		{Version{Version: "(devel)", Commit: "334c5f878fa2aa", Modified: true}, "dev (334c5f8, modified)"},
		{Version{Version: "(devel)", Commit: "(unknown)"}, "dev"},
	} {
		if got := c.v.Short(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}
