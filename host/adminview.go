package host

import (
	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/buildinfo"
	"github.com/cmdhost/cmdhost/plugins"
)

// What the admin ops take and answer: the contract between the host's
// admin ops (admin.go) and their clients, such as `cmdhost admin`.

// AdminTokenKey is the request user property that carries the admin token.
const AdminTokenKey = "cmdhost-admin-token"

// AdminTopic returns the request topic of an admin op.
func AdminTopic(executorID, op string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/admin/" + op
}

// StatusForbidden refuses an admin op that needs the token.
const StatusForbidden abi.Status = 403

// PluginView is a plugin as the admin ops report it: its status and the
// latency of its current version's last calls.
type PluginView struct {
	plugins.PluginStatus
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	// Declared are the commands with their settings (inspect only).
	Declared []abi.Command `json:"declared,omitempty"`
	// Timeouts are the commands' execution timeouts as served, where each
	// comes from, and their on_timeout policies, sorted by command name
	// (inspect only).
	Timeouts []CommandTimeout `json:"timeouts,omitempty"`
}

// CommandTimeout is a command's TimeoutView, named.
type CommandTimeout struct {
	Command string `json:"command"`
	TimeoutView
}

// TimeoutView shows how a command is served when a call runs long: its
// execution timeout, the setting it comes from (operator file per command
// or per plugin, module, host default) and its on_timeout policy. The
// request's expiry caps the timeout at run time.
type TimeoutView struct {
	// EffectiveTimeout is a Go duration, "0s" when there is none (the
	// request's expiry alone); "" when it is the host's default and that
	// is not known.
	EffectiveTimeout string                `json:"effectiveTimeout,omitempty"`
	TimeoutSource    plugins.TimeoutSource `json:"timeoutSource"`
	OnTimeout        string                `json:"onTimeout"` // events.PolicyFail or events.PolicyRetry
	Retries          int                   `json:"retries,omitempty"`
}

// NewTimeoutView returns the view of the command c.
func NewTimeoutView(c plugins.Command) TimeoutView {
	return TimeoutView{EffectiveTimeout: c.Timeout.String(), TimeoutSource: c.TimeoutSource,
		OnTimeout: string(c.OnTimeout.Policy()), Retries: c.OnTimeout.Retries}
}

// AdminStats is what the stats op reports.
type AdminStats struct {
	Plugins []PluginView     `json:"plugins"`
	Reuse   cache.ReuseStats `json:"reuse"`
	// Build is the host binary's version, for `cmdhost version
	// --executor`: the binary run there may not be the one at hand.
	Build buildinfo.Version `json:"build"`
}

// AdminRequest is the payload of inspect, reload and remove.
type AdminRequest struct {
	Name string `json:"name"`
}
