package base

import (
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/host/admin"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// Pending says what the host showed when --wait passed without a verdict.
func Pending(executor, name, dir string, wait time.Duration, v *admin.PluginView, digest string) string {
	msg := fmt.Sprintf("host %s has neither served nor refused %s within --wait %v: ", executor, name, wait)
	switch {
	case v == nil:
		return msg + fmt.Sprintf("it lists no plugin %s; is %s the folder it serves (serve --plugins)? (cmdhost plugin list)", name, dir)
	case v.State == pluginmgr.StateLoading:
		return msg + "it is still loading it (a large module compiles for a while the first time: raise --wait)"
	case v.Digest != "":
		return msg + fmt.Sprintf("it still serves version %s, not %s (a large module compiles for a while the first time: raise --wait; cmdhost plugin list)", Short(v.Digest), Short(digest))
	}
	return msg + fmt.Sprintf("it shows %s as %s (cmdhost plugin list)", name, Shown(string(v.State)))
}
