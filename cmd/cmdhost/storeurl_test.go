package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/host"
)

// --store takes one Redis, a master through its Sentinels, or a
// cluster's nodes; a URL of none of these forms is refused with the
// forms, and never with its password.
func TestStoreURLForms(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not checked here"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url, ca string
		want    string // "": accepted
	}{
		{url: "redis://127.0.0.1:6379/0"},
		{url: "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381/mymaster"},
		{url: "redis+sentinel://cmdhost@s1:26379/mymaster/2"},
		{url: "rediss+sentinel://s1:26379,s2:26379/mymaster", ca: ca},
		{url: "redis-cluster://127.0.0.1:7000,127.0.0.1:7001"},
		{url: "rediss-cluster://cmdhost@node-1:6380", ca: ca},
		{url: "redis+sentinel://s1:26379", want: "want /MASTER[/DB] after the Sentinels"},
		{url: "redis+sentinel://s1:26379/m/zero", want: `database "zero" is not a number`},
		{url: "redis-cluster://n1:7000/0", want: "a cluster URL has no path"},
		{url: "redis-cluster://n2,n1:7000", want: `"n2" is not HOST:PORT`},
		{url: "redis-cluster://n1:7000?read_only=true", want: "takes no query"},
		{url: "redis+sentinel://u:Secret-PW-1@s1:26379/m", want: "a password in the URL"},
		{url: "memcached://m:11211", want: `scheme "memcached"`},
		{url: "redis-cluster://n1:7000", ca: ca, want: "are for TLS: use rediss://"},
	} {
		err := checkStore(&host.Config{Store: c.url, StoreCAFile: c.ca})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		case err != nil && strings.Contains(err.Error(), "Secret-PW-1"):
			t.Errorf("%s: the error shows the password: %v", c.url, err)
		}
	}
}
