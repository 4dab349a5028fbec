package plugincmd

import (
	"reflect"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host/admin"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// TestTimeoutView: how the CLI renders a command's timeout, from the
// settings the manager resolved.
func TestTimeoutView(t *testing.T) {
	cases := []struct {
		c    pluginmgr.Command
		want admin.TimeoutView
		text string
	}{
		{pluginmgr.Command{Timeout: time.Second, TimeoutSource: pluginmgr.TimeoutFromOperatorCommand, OnTimeout: pluginmgr.OnTimeout{Retries: 3}},
			admin.TimeoutView{EffectiveTimeout: "1s", TimeoutSource: "operator command", OnTimeout: "retry", Retries: 3}, "1s (operator command), retry ×3"},
		{pluginmgr.Command{Timeout: 3 * time.Second, TimeoutSource: pluginmgr.TimeoutFromModule},
			admin.TimeoutView{EffectiveTimeout: "3s", TimeoutSource: "module", OnTimeout: "fail"}, "3s (module), fail"},
		{pluginmgr.Command{Timeout: 10 * time.Second, TimeoutSource: pluginmgr.TimeoutFromHost},
			admin.TimeoutView{EffectiveTimeout: "10s", TimeoutSource: "host default", OnTimeout: "fail"}, "10s (host default), fail"},
		{pluginmgr.Command{TimeoutSource: pluginmgr.TimeoutFromHost},
			admin.TimeoutView{EffectiveTimeout: "0s", TimeoutSource: "host default", OnTimeout: "fail"}, "none (host default), fail"},
	}
	for _, c := range cases {
		v := admin.NewTimeoutView(c.c)
		if text := timeoutWithSource(v) + ", " + timeoutPolicy(v); !reflect.DeepEqual(v, c.want) || text != c.text {
			t.Errorf("%+v: %+v %q, want %+v %q", c.c, v, text, c.want, c.text)
		}
	}
}
