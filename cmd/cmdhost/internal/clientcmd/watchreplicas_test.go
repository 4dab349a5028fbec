package clientcmd

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/plugincmd"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Two replicas of one host (serve --share g, each its own client id), on
// mosquitto and on the embedded broker: plugin list and watch name the
// replica that answered, and with --all show both, each by its client id.
func TestReplicasNamedAndAll(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	for name, start := range map[string]func(testing.TB) *url.URL{
		"mosquitto": brokertest.StartMosquitto, "embedded": brokertest.StartEmbedded,
	} {
		t.Run(name, func(t *testing.T) {
			broker := start(t)
			for _, id := range []string{"replica-a", "replica-b"} {
				clitest.StartServe(t, nil, "--broker", broker.String(), "--client-id", id, "--share", "g")
			}
			host := []string{"--broker", broker.String(), "--executor", "cli-host"}
			both := []string{"replica-a", "replica-b"}

			out, errOut, code := clitest.Run(t, append([]string{"plugin", "list", "--json"}, host...)...)
			var views []admin.PluginView
			if code != 0 || json.Unmarshal([]byte(out), &views) != nil || len(views) == 0 {
				t.Fatalf("plugin list --json: %q %q %d", out, errOut, code)
			}
			if v := views[0]; !slices.Contains(both, v.ClientID) || v.Share != "g" {
				t.Errorf("plugin list --json names replica %q of share group %q, want one of %v of g", v.ClientID, v.Share, both)
			}
			out, errOut, code = clitest.Run(t, append([]string{"plugin", "list"}, host...)...)
			if code != 0 || !strings.Contains(out, "host cli-host, replica replica-") || !strings.Contains(out, "(share group g)") {
				t.Errorf("plugin list names no replica: %q %q %d", out, errOut, code)
			}

			out, errOut, code = clitest.Run(t, append([]string{"plugin", "list", "--all", "--json"}, host...)...)
			clitest.CheckJSONShape(t, "plugin list --all", out)
			var all []plugincmd.ReplicaPlugins
			if code != 0 || json.Unmarshal([]byte(out), &all) != nil {
				t.Fatalf("plugin list --all --json: %q %q %d", out, errOut, code)
			}
			var ids []string
			for _, r := range all {
				ids = append(ids, r.ClientID)
				if len(r.Plugins) == 0 || r.Plugins[0].ClientID != r.ClientID {
					t.Errorf("replica %s: plugins %+v, each should name it", r.ClientID, r.Plugins)
				}
			}
			if !slices.Equal(ids, both) {
				t.Errorf("plugin list --all --json lists replicas %v, want %v:\n%s", ids, both, out)
			}

			out, errOut, code = clitest.Run(t, append([]string{"watch", "--count", "1", "--all", "--json"}, host...)...)
			clitest.CheckJSONShape(t, "watch --all", out)
			var f watchAllFrame
			if code != 0 || json.Unmarshal([]byte(out), &f) != nil {
				t.Fatalf("watch --count 1 --all --json: %q %q %d", out, errOut, code)
			}
			ids = nil
			for _, r := range f.Replicas {
				ids = append(ids, r.ClientID)
				if r.Share != "g" || len(r.Plugins) == 0 {
					t.Errorf("watch --all: replica %s of group %q with %d plugins", r.ClientID, r.Share, len(r.Plugins))
				}
			}
			if !slices.Equal(ids, both) {
				t.Errorf("watch --all shows replicas %v, want %v:\n%s", ids, both, out)
			}

			out, errOut, code = clitest.Run(t, append([]string{"watch", "--count", "1", "--json"}, host...)...)
			var one WatchFrame
			if code != 0 || json.Unmarshal([]byte(out), &one) != nil || !slices.Contains(both, one.ClientID) {
				t.Errorf("watch --count 1 --json names no replica: %q %q %d", out, errOut, code)
			}
		})
	}
}
