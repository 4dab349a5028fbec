package servecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
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
		err := checkStore(&host.Config{Store: host.StoreConfig{URL: c.url, CAFile: c.ca}})
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

// With --store the handlers' state is in the store's Redis: a state
// folder given with it is refused, naming the fix; --state-dir off runs
// without a state store; neither, the state is the store's.
func TestStoreKeepsTheState(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := clitest.RunWithin(t, time.Minute, "serve", "--plugins", dir, "--store", "redis://127.0.0.1:1/0", "--state-dir", t.TempDir())
	if code != base.ExitUsage || !strings.Contains(errOut, "with --store, the handlers' state is kept in the store's Redis") {
		t.Errorf("--state-dir with --store: exit %d, %q", code, errOut)
	}
	for _, c := range []struct {
		dir     string
		noState bool
	}{{"", false}, {"off", true}} {
		var cfg host.Config
		app := &cli.App{Commands: []*cli.Command{{Name: "serve", Flags: stateFlags(), Action: func(ctx *cli.Context) error {
			cfg = host.Config{PluginsDir: dir, Store: host.StoreConfig{URL: "redis://127.0.0.1:1/0"}}
			return stateSettings(ctx, &cfg)
		}}}}
		args := []string{"cmdhost", "serve"}
		if c.dir != "" {
			args = append(args, "--state-dir", c.dir)
		}
		if err := app.Run(args); err != nil {
			t.Fatalf("--state-dir %q: %v", c.dir, err)
		}
		if cfg.Store.StateDir != "" || cfg.Store.NoState != c.noState {
			t.Errorf("--state-dir %q with --store: StateDir %q NoState %v", c.dir, cfg.Store.StateDir, cfg.Store.NoState)
		}
	}
}
