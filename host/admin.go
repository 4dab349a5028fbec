package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/buildinfo"
	"github.com/cmdhost/cmdhost/internal/rpc"
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

// admin serves the admin ops for a plugins manager.
type admin struct {
	Manager *plugins.Manager
	// Token allows reload and remove; "" refuses them.
	Token string
	// Reuse reports the reuse cache's counters for stats; nil: none.
	Reuse func() cache.ReuseStats
}

// Commands returns the admin ops as RPC commands.
func (a *admin) Commands() []rpc.Command {
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
			st := AdminStats{Plugins: a.views(false), Build: buildinfo.Read()}
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

func (a *admin) checkToken(r *abi.Request) *abi.Response {
	switch {
	case a.Token == "":
		return &abi.Response{Status: StatusForbidden, Message: "this op changes state and the host has no admin token: start `cmdhost serve --admin-token TOKEN`"}
	case r.Metadata[AdminTokenKey] != a.Token:
		return &abi.Response{Status: StatusForbidden, Message: "wrong or missing admin token (user property " + AdminTokenKey + "; `--token` or CMDHOST_ADMIN_TOKEN)"}
	}
	return nil
}

func (a *admin) known(name string) error {
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

func (a *admin) view(name string) PluginView {
	for _, v := range a.views(false) {
		if v.Name == name {
			return v
		}
	}
	return PluginView{}
}

// views reports every plugin; the latency is its serving version's.
func (a *admin) views(declared bool) []PluginView {
	out := []PluginView{} // no plugin is [], not null, in the reply's JSON
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
func (a *admin) timeouts(plugin string) []CommandTimeout {
	var out []CommandTimeout
	for _, s := range a.Manager.Commands() {
		if s.Plugin != plugin {
			continue
		}
		out = append(out, CommandTimeout{Command: s.Name(), TimeoutView: NewTimeoutView(s)})
	}
	return out
}
