package plugincmd

import (
	"github.com/cmdhost/cmdhost/host/admin"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// timeoutWithSource shows a command's execution timeout with its source,
// e.g. "2s (operator command)", "none (host default)".
func timeoutWithSource(v admin.TimeoutView) string {
	if v.EffectiveTimeout == "0s" {
		return "none (" + string(v.TimeoutSource) + ")"
	}
	return v.EffectiveTimeout + " (" + string(v.TimeoutSource) + ")"
}

// timeoutPolicy shows a command's on_timeout policy: "fail" or, e.g.,
// "retry ×2".
func timeoutPolicy(v admin.TimeoutView) string {
	return pluginmgr.OnTimeout{Retries: v.Retries}.String()
}
