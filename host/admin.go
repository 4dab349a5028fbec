package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/plugins"
)

// The host's own admin commands, served over the same RPC protocol on
// executor-specific topics: cmdhost/{executorId}/admin/{op}. Reading ops
// (list, inspect, stats) are open; ops that change state (reload, remove)
// need the token `serve --admin-token` set, sent as the request's user
// property cmdhost-admin-token. Without a token set they are refused. The
// token is a guard against mistakes, not a security boundary: who may
// publish to cmdhost/# is for the broker's ACLs to decide. No plugin may
// serve a topic there (plugins.HostTopicPrefix): the admin ops reach the
// host only.

// AdminTokenKey is the request user property that carries the admin token.
const AdminTokenKey = "cmdhost-admin-token"

// AdminTopic returns the request topic of an admin op.
func AdminTopic(executorID, op string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/admin/" + op
}

// StatusForbidden refuses an admin op that needs the token.
const StatusForbidden abi.Status = 403

// Admin serves the admin ops for a plugins manager.
type Admin struct {
	Manager *plugins.Manager
	// Token allows reload and remove; "" refuses them.
	Token string
	// Reuse reports the reuse cache's counters for stats; nil: none.
	Reuse func() cache.ReuseStats
	// HostTimeout is the host's default execution timeout (serve
	// --exec-timeout, the value given to Served), which inspect shows for
	// the commands it applies to; 0: not shown, only its source is.
	HostTimeout time.Duration
}

// PluginView is a plugin as the admin ops report it: its status and the
// latency of its current version's last calls.
type PluginView struct {
	plugins.PluginStatus
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	// Declared are the commands with their settings (inspect only).
	Declared []abi.Command `json:",omitempty"`
	// Timeouts are the commands' execution timeouts as served, where each
	// comes from, and their on_timeout policies, sorted by command name
	// (inspect only).
	Timeouts []CommandTimeout `json:",omitempty"`
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

// NewTimeoutView returns the view of s served by a host whose default
// execution timeout is hostTimeout.
func NewTimeoutView(s plugins.Served, hostTimeout time.Duration) TimeoutView {
	d, src := s.EffectiveTimeout(hostTimeout)
	return TimeoutView{EffectiveTimeout: d.String(), TimeoutSource: src,
		OnTimeout: string(s.OnTimeout.Policy()), Retries: s.OnTimeout.Retries}
}

// WithSource shows the execution timeout with its source, e.g. "2s
// (operator command)", "none (host default)".
func (v TimeoutView) WithSource() string {
	switch v.EffectiveTimeout {
	case "":
		return "(" + string(v.TimeoutSource) + ")"
	case "0s":
		return "none (" + string(v.TimeoutSource) + ")"
	}
	return v.EffectiveTimeout + " (" + string(v.TimeoutSource) + ")"
}

// Policy shows the on_timeout policy: "fail" or, e.g., "retry ×2".
func (v TimeoutView) Policy() string { return plugins.OnTimeout{Retries: v.Retries}.String() }

// String shows the timeout, its source and the policy, e.g. "10s
// (operator command), retry ×2".
func (v TimeoutView) String() string { return v.WithSource() + ", " + v.Policy() }

// AdminStats is what the stats op reports.
type AdminStats struct {
	Plugins []PluginView
	Reuse   cache.ReuseStats
}

// AdminRequest is the payload of inspect, reload and remove.
type AdminRequest struct {
	Name string `json:"name"`
}

// Commands returns the admin ops as RPC commands.
func (a *Admin) Commands() []rpc.Command {
	op := func(name string, guarded bool, f func(ctx context.Context, req AdminRequest) (any, error)) rpc.Command {
		return rpc.Command{
			Name: "admin-" + name, Topic: plugins.HostTopicPrefix + "/{executorId}/admin/" + name, Concurrency: 2,
			Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
				if guarded {
					if refusal := a.checkToken(r); refusal != nil {
						return refusal, nil
					}
				}
				var req AdminRequest
				if len(r.Payload) > 0 {
					if err := json.Unmarshal(r.Payload, &req); err != nil {
						return &abi.Response{Status: abi.StatusBadRequest, Message: `payload must be JSON such as {"name":"echo"}`}, nil
					}
				}
				out, err := f(ctx, req)
				if err != nil {
					var bad *badRequest
					if errors.As(err, &bad) {
						return &abi.Response{Status: abi.StatusBadRequest, Message: bad.msg, PropName: "name", PropValue: req.Name}, nil
					}
					return nil, err
				}
				b, err := json.Marshal(out)
				if err != nil {
					return nil, err
				}
				return &abi.Response{Payload: b, ContentType: "application/json", Format: abi.FormatUTF8}, nil
			},
		}
	}
	return []rpc.Command{
		op("list", false, func(context.Context, AdminRequest) (any, error) { return a.views(false), nil }),
		op("stats", false, func(context.Context, AdminRequest) (any, error) {
			st := AdminStats{Plugins: a.views(false)}
			if a.Reuse != nil {
				st.Reuse = a.Reuse()
			}
			return st, nil
		}),
		op("inspect", false, func(_ context.Context, req AdminRequest) (any, error) {
			for _, v := range a.views(true) {
				if v.Name == req.Name {
					return v, nil
				}
			}
			return nil, &badRequest{fmt.Sprintf("no plugin named %q", req.Name)}
		}),
		op("reload", true, func(ctx context.Context, req AdminRequest) (any, error) {
			if err := a.known(req.Name); err != nil {
				return nil, err
			}
			if err := a.Manager.Reload(ctx, req.Name); err != nil {
				return nil, &badRequest{err.Error()}
			}
			return a.view(req.Name), nil
		}),
		op("remove", true, func(ctx context.Context, req AdminRequest) (any, error) {
			if err := a.known(req.Name); err != nil {
				return nil, err
			}
			file := a.view(req.Name).File
			if err := a.Manager.Remove(ctx, req.Name); err != nil {
				return nil, &badRequest{err.Error()}
			}
			// The file goes too, so that a restart does not serve it again.
			if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("plugin %s removed, but its file stays: %w", req.Name, err)
			}
			return map[string]string{"removed": req.Name}, nil
		}),
	}
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func (a *Admin) checkToken(r *abi.Request) *abi.Response {
	switch {
	case a.Token == "":
		return &abi.Response{Status: StatusForbidden, Message: "this op changes state and the host has no admin token: start `cmdhost serve --admin-token TOKEN`"}
	case r.Metadata[AdminTokenKey] != a.Token:
		return &abi.Response{Status: StatusForbidden, Message: "wrong or missing admin token (user property " + AdminTokenKey + "; `--token` or CMDHOST_ADMIN_TOKEN)"}
	}
	return nil
}

func (a *Admin) known(name string) error {
	if strings.TrimSpace(name) == "" {
		return &badRequest{`name the plugin: {"name":"echo"}`}
	}
	for _, st := range a.Manager.Status() {
		if st.Name == name {
			return nil
		}
	}
	return &badRequest{fmt.Sprintf("no plugin named %q", name)}
}

func (a *Admin) view(name string) PluginView {
	for _, v := range a.views(false) {
		if v.Name == name {
			return v
		}
	}
	return PluginView{}
}

// views reports every plugin; the latency is its serving version's.
func (a *Admin) views(declared bool) []PluginView {
	var out []PluginView
	for _, st := range a.Manager.Status() {
		v := PluginView{PluginStatus: st}
		if len(st.Commands) > 0 {
			if p, ok := a.Manager.Lookup(st.Commands[0]); ok && p.Name() == st.Name {
				s := p.Stats()
				v.P50Ms, v.P99Ms = float64(s.P50.Microseconds())/1000, float64(s.P99.Microseconds())/1000
				if declared {
					v.Declared = p.Description().Commands
					v.Timeouts = a.timeouts(st.Name)
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// timeouts returns the timeouts of the commands plugin serves, sorted by
// command name.
func (a *Admin) timeouts(plugin string) []CommandTimeout {
	var out []CommandTimeout
	for _, s := range a.Manager.Commands() {
		if s.Plugin != plugin {
			continue
		}
		v := NewTimeoutView(s, a.HostTimeout)
		if v.TimeoutSource == plugins.TimeoutFromHost && a.HostTimeout == 0 {
			v.EffectiveTimeout = "" // not known here
		}
		out = append(out, CommandTimeout{Command: s.Command.Name, TimeoutView: v})
	}
	return out
}
