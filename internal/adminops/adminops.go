// Package adminops is the host's side of its admin ops: list, inspect,
// stats, reload, remove, install, rollback and the state ops (state.go),
// served as RPC commands beside the plugins'
// (host puts them first). The contract they answer by, topics, token,
// requests and replies, is the public package host/admin, which clients
// import too; this package holds what only the host needs: the ops over a
// plugins manager and the token check.
package adminops

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/buildinfo"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/secret"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/plugins"
)

// The ops are served on executor-specific topics, where no plugin may
// serve (plugins.HostTopicPrefix): the admin ops reach the host only. What
// each op takes and answers, and the rules of the token, are documented
// in host/admin.

// Config configures the Ops. Manager is required.
type Config struct {
	Manager *plugins.Manager
	// Dir is the Manager's plugins folder: the views' paths are shown
	// relative to it (admin.PluginView). Required.
	Dir string
	// TokenFile is the file of the token that allows reload and remove,
	// looked at again at each of them and read again when it changed
	// (secret.File), so that a rotated token counts at once; Token is the token itself, used when
	// TokenFile is "". Both "": reload and remove are refused.
	TokenFile string
	Token     string
	// Reuse reports the reuse cache's counters for stats; nil: none.
	Reuse func() cache.ReuseStats
	// ClientID is the host's MQTT client id and ShareGroup its share
	// group (serve --share; "" for a lone host): each reply that
	// describes the host names them (admin.ReplicaID). A ClientID that is
	// a topic level also gets the ops on topics of its own
	// (admin.ReplicaTopic), so that a client can ask this replica of a
	// group and not any.
	ClientID, ShareGroup string
	// MaxModuleBytes is the largest module install takes (the manager's
	// limit, serve --max-module-size); 0: wasm.DefaultMaxModuleBytes.
	// MaxRequestBytes is the largest request the host takes (serve
	// --max-request-bytes), told to clients in stats so that an install's
	// chunks fit; 0: not told.
	MaxModuleBytes, MaxRequestBytes int
	// Logger receives a line for each refused op (who, which op, why;
	// never a token); nil discards them.
	Logger *slog.Logger
	// Admin, when set, reports whether a request's verified caller
	// (abi.Request.Caller: the user the embedded broker authenticated)
	// may use the ops that change state without the token: the embedded
	// broker's ACL grants that user `admin`. nil: the token alone.
	Admin func(abi.Caller) bool
	// Events receives an events.KindAdmin event for each op that changes
	// a plugin (install, remove, reload, rollback) and for each refused
	// for its token: the audit. nil: they go to Logger (events.Log).
	Events events.Sink
	// Clock is the time of uploads and events; nil: the system's.
	Clock clock.Clock
	// State is the host's state store, which the state ops read and
	// write (state.go) and the views' StateKeys and StateBytes report;
	// nil: none (those ops answer 503).
	State StateStore
	// Pull fetches the module of an OCI reference of at most max bytes,
	// and its signature file (nil: none), for an install that asks the
	// host to pull it (admin.InstallReferenceKey); nil: such an install is
	// refused.
	Pull func(ctx context.Context, ref string, max int) (module, sig []byte, err error)
}

// Ops serves the admin ops for a plugins manager.
type Ops struct {
	cfg     Config
	log     *slog.Logger
	folder  string // admin.FolderID of cfg.Dir
	clk     clock.Clock
	events  events.Sink
	started time.Time // when New made the ops: the host's uptime in stats
	uploads uploads   // the install op's modules arriving
	// refusals bounds the log lines and audit events of ops refused for
	// their token to one a second: anyone who may publish on the admin
	// topics can send requests without it, and each would otherwise be a
	// line and an event. The one written counts those left out.
	refusals ratelog.Limiter
	// tokenFile is Config.TokenFile's (nil: none).
	tokenFile *secret.File
	// unreadable bounds the log lines saying the token file cannot be read
	// (each op that needs it tries again) to one a second.
	unreadable ratelog.Limiter
}

// New returns the Ops of cfg. A TokenFile that cannot be read now is an
// error: the host would refuse every op that needs it.
func New(cfg Config) (*Ops, error) {
	if cfg.Manager == nil || cfg.Dir == "" {
		return nil, errors.New("admin ops: a plugins manager and its folder are required")
	}
	a := &Ops{cfg: cfg, log: logx.OrDiscard(cfg.Logger), folder: admin.FolderID(cfg.Dir), clk: clock.OrSystem(cfg.Clock), events: cfg.Events,
		refusals: ratelog.Limiter{Interval: time.Second}, unreadable: ratelog.Limiter{Interval: time.Second}}
	if a.events == nil {
		a.events = events.Log(a.log)
	}
	if cfg.TokenFile != "" {
		a.tokenFile = &secret.File{Path: cfg.TokenFile}
		if _, err := a.tokenFile.Read(); err != nil {
			return nil, fmt.Errorf("admin token: %w", err)
		}
	}
	a.started = a.clk.Now()
	return a, nil
}

// Commands returns the admin ops as RPC commands, on the topic pattern of
// each (admin.Topic with the executor's id to fill in).
func (a *Ops) Commands() []rpc.Command {
	// op makes the command of an op: guarded ones need the token; f gets
	// the request's JSON payload read into an admin.Request (raw: not
	// read, for install's module bytes) and returns the reply's value, or
	// an *abi.Response to send as it is.
	var op opMaker = func(name string, guarded, raw bool, f func(ctx context.Context, r *abi.Request, req admin.Request) (any, error)) rpc.Command {
		return rpc.Command{
			Name: "admin-" + name, Topic: admin.Topic("{executorId}", name), Concurrency: 2,
			Handler: func(ctx context.Context, r *abi.Request) (*abi.Response, error) {
				if guarded {
					if refusal := a.checkToken(name, r); refusal != nil {
						return refusal, nil
					}
				}
				var req admin.Request
				if len(r.Payload) > 0 && !raw {
					if err := json.Unmarshal(r.Payload, &req); err != nil {
						return &abi.Response{Status: abi.StatusBadRequest, Message: `payload must be JSON such as {"name":"echo"}`}, nil
					}
				}
				out, err := f(ctx, r, req)
				if err != nil {
					var bad *badRequest
					if errors.As(err, &bad) {
						return &abi.Response{Status: abi.StatusBadRequest, Message: bad.msg, PropName: "name", PropValue: req.Name}, nil
					}
					return nil, err
				}
				if resp, ok := out.(*abi.Response); ok {
					return resp, nil
				}
				return jsonReply(out)
			},
		}
	}
	ops := []rpc.Command{
		op(admin.OpList, false, false, func(context.Context, *abi.Request, admin.Request) (any, error) { return a.views(false), nil }),
		op(admin.OpStats, false, false, func(context.Context, *abi.Request, admin.Request) (any, error) {
			st := admin.Stats{ReplicaID: a.Replica(), Plugins: a.views(false), Build: buildinfo.Read(), Started: a.started,
				MaxRequestBytes: a.cfg.MaxRequestBytes, MaxModuleBytes: a.maxModule()}
			if a.cfg.Reuse != nil {
				st.Reuse = a.cfg.Reuse()
			}
			return st, nil
		}),
		op(admin.OpInspect, false, false, func(_ context.Context, _ *abi.Request, req admin.Request) (any, error) {
			for _, v := range a.views(true) {
				if v.Name == req.Name {
					return v, nil
				}
			}
			return nil, &badRequest{fmt.Sprintf("no plugin named %q", req.Name)}
		}),
		op(admin.OpReload, true, false, func(ctx context.Context, r *abi.Request, req admin.Request) (any, error) {
			if err := a.known(req.Name); err != nil {
				return nil, err
			}
			if err := a.cfg.Manager.Reload(ctx, req.Name); err != nil {
				a.audit(r, admin.OpReload, req.Name, "", events.VerdictRefused, a.relativeText(err.Error()))
				return nil, &badRequest{err.Error()}
			}
			v := a.view(req.Name)
			a.audit(r, admin.OpReload, req.Name, v.Digest, events.VerdictDone, "")
			return v, nil
		}),
		op(admin.OpRemove, true, false, func(ctx context.Context, r *abi.Request, req admin.Request) (any, error) {
			if err := a.known(req.Name); err != nil {
				return nil, err
			}
			file, digest := a.file(req.Name), a.view(req.Name).Digest
			if err := a.cfg.Manager.Remove(ctx, req.Name); err != nil {
				a.audit(r, admin.OpRemove, req.Name, digest, events.VerdictRefused, a.relativeText(err.Error()))
				return nil, &badRequest{err.Error()}
			}
			// The file goes too, so that a restart does not serve it again,
			// and its signature, which no other module would match.
			if err := os.Remove(file + signing.Ext); err != nil && !errors.Is(err, os.ErrNotExist) {
				a.log.Warn("plugin removed, but its signature file stays", "plugin", req.Name, "err", err)
			}
			if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
				a.audit(r, admin.OpRemove, req.Name, digest, events.VerdictRefused, "its file stays: "+a.relativeText(err.Error()))
				return nil, fmt.Errorf("plugin %s removed, but its file stays: %w", req.Name, err)
			}
			a.audit(r, admin.OpRemove, req.Name, digest, events.VerdictDone, "")
			return map[string]string{"removed": req.Name}, nil
		}),
		op(admin.OpInstall, true, true, func(ctx context.Context, r *abi.Request, _ admin.Request) (any, error) {
			return a.installOp(ctx, r)
		}),
		op(admin.OpRollback, true, false, func(ctx context.Context, r *abi.Request, req admin.Request) (any, error) {
			return a.rollbackOp(ctx, r, req)
		}),
	}
	ops = append(ops, a.stateOps(op)...)
	if topic.CheckLevel(a.cfg.ClientID) != nil {
		return ops
	}
	// The same ops on this replica's own topics: the executor subscribes
	// to each (through the share group too, where this replica is the only
	// one to ask for them, so it gets them all).
	for _, c := range ops[:len(ops):len(ops)] {
		mine := c
		op := strings.TrimPrefix(c.Name, "admin-")
		mine.Name, mine.Topic = "admin-replica-"+op, admin.ReplicaTopic("{executorId}", a.cfg.ClientID, op)
		ops = append(ops, mine)
	}
	return ops
}

// Replica names this host in the replies that describe it.
func (a *Ops) Replica() admin.ReplicaID {
	return admin.ReplicaID{ClientID: a.cfg.ClientID, Share: a.cfg.ShareGroup}
}

// Announce publishes this host's admin.ReplicaID on admin.ReplicasTopic
// at once and then every admin.AnnounceInterval of clk, until ctx ends,
// so that clients find every replica of the group (admin.Client.Replicas)
// and every host on the broker (admin.Client.Hosts). A replica whose
// client id is no topic level announces nothing (it has no topics of its
// own to be asked on); a lone host announces itself whatever its client
// id. A failed publish is logged at debug level: the next one may go out.
func (a *Ops) Announce(ctx context.Context, clk clock.Clock, executorID string, publish func(ctx context.Context, topic string, payload []byte) error) {
	if a.cfg.ShareGroup != "" && topic.CheckLevel(a.cfg.ClientID) != nil {
		return
	}
	payload, err := json.Marshal(a.Replica())
	if err != nil {
		return
	}
	to := admin.ReplicasTopic(executorID)
	t := clock.NewTimer(clock.OrSystem(clk), admin.AnnounceInterval)
	defer t.Stop()
	for {
		if err := publish(ctx, to, payload); err != nil && ctx.Err() == nil {
			a.log.Debug("announcing the replica", "topic", to, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(admin.AnnounceInterval)
		}
	}
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// checkToken refuses the request r for op unless it carries the host's
// token, compared in constant time; a refusal is logged and audited with
// the invoker's client id as it claims it (__srcId, cut to 128 bytes) and
// why, never with a token, at most once a second (with the count of those
// left out since the last). A request without a token, or with one longer
// than a token file may hold, is refused before the file is read.
func (a *Ops) checkToken(op string, r *abi.Request) *abi.Response {
	if a.byIdentity(op, r) {
		return nil
	}
	refuse := func(why, msg string) *abi.Response {
		if ok, leftOut := a.refusals.Allow(a.clk.Now()); ok {
			a.log.Warn("admin op refused", "op", op, "invoker", session.CleanText(r.InvokerID, 128), "why", why,
				"user", session.CleanText(r.Caller.User, 128), "client_id", session.CleanText(r.Caller.ClientID, 128),
				"refusals_not_logged", leftOut)
			if leftOut > 0 {
				why = fmt.Sprintf("%s (and %d refusals before it not logged)", why, leftOut)
			}
			a.audit(r, op, "", "", events.VerdictForbidden, why)
		}
		return &abi.Response{Status: admin.StatusForbidden, Message: msg}
	}
	noToken := func() *abi.Response {
		return refuse("the host has no admin token",
			"this op changes state and the host has no admin token: start `cmdhost serve --admin-token-file FILE`")
	}
	got, ok := r.Metadata[admin.TokenKey]
	switch {
	case a.tokenFile == nil && a.cfg.Token == "":
		// No token can pass: say so before asking for one the
		// invoker cannot have (no file is read to know it).
		return noToken()
	case !ok:
		return refuse("no token", "missing admin token (user property "+admin.TokenKey+"; `--token-file FILE` or CMDHOST_ADMIN_TOKEN)")
	case len(got) > secret.MaxBytes:
		return refuse("wrong token", "wrong admin token (user property "+admin.TokenKey+"; `--token-file FILE` or CMDHOST_ADMIN_TOKEN)")
	}
	want, err := a.token()
	switch {
	case err != nil:
		if ok, leftOut := a.unreadable.Allow(a.clk.Now()); ok {
			a.log.Error("admin token unreadable: ops that change state are refused", "err", err, "lines_not_logged", leftOut)
		}
		return refuse("the host cannot read its admin token file", "the host cannot read its admin token file: see its log")
	case want == "":
		return noToken()
	}
	if !sameToken(got, want) {
		return refuse("wrong token", "wrong admin token (user property "+admin.TokenKey+"; `--token-file FILE` or CMDHOST_ADMIN_TOKEN)")
	}
	return nil
}

// sameToken compares two tokens in constant time, their lengths
// included (ConstantTimeCompare returns at once on a length mismatch):
// their digests are compared.
func sameToken(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// token is the host's admin token now: its file's content, as it is now,
// or Config.Token.
func (a *Ops) token() (string, error) {
	if a.tokenFile != nil {
		return a.tokenFile.Read()
	}
	return a.cfg.Token, nil
}

func (a *Ops) known(name string) error {
	if strings.TrimSpace(name) == "" {
		return &badRequest{`name the plugin: {"name":"echo"}`}
	}
	for _, st := range a.cfg.Manager.Status() {
		if st.Name == name {
			return nil
		}
	}
	return &badRequest{fmt.Sprintf("no plugin named %q", name)}
}

// file is the path of plugin name's module file.
func (a *Ops) file(name string) string {
	for _, st := range a.cfg.Manager.Status() {
		if st.Name == name {
			return st.File
		}
	}
	return ""
}

// relative shows the paths of st relative to the plugins folder.
func (a *Ops) relative(st plugins.PluginStatus) plugins.PluginStatus {
	rel := func(p string) string {
		if r, err := filepath.Rel(a.cfg.Dir, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return filepath.Base(p)
	}
	if st.File != "" {
		st.File = rel(st.File)
	}
	if st.Operator != "" {
		st.Operator = rel(st.Operator)
	}
	st.LastError = a.relativeText(st.LastError)
	return st
}

// relativeText is s with the plugins folder's absolute path taken out of
// the paths it names (admin.PluginView).
func (a *Ops) relativeText(s string) string {
	if filepath.IsAbs(a.cfg.Dir) { // a relative folder's name says nothing of the machine
		s = strings.ReplaceAll(s, filepath.Clean(a.cfg.Dir)+string(filepath.Separator), "")
	}
	return s
}

func (a *Ops) view(name string) admin.PluginView {
	for _, v := range a.views(false) {
		if v.Name == name {
			return v
		}
	}
	return admin.PluginView{}
}

// views reports every plugin; the latency is its serving version's.
func (a *Ops) views(declared bool) []admin.PluginView {
	out := []admin.PluginView{} // no plugin is [], not null, in the reply's JSON
	for _, st := range a.cfg.Manager.Status() {
		v := admin.PluginView{PluginStatus: a.relative(st), ReplicaID: a.Replica(), Folder: a.folder}
		v.StateKeys, v.StateBytes = a.stateUsage(st.Name)
		if len(st.Commands) > 0 {
			if p, ok := a.cfg.Manager.Lookup(st.Commands[0]); ok && p.Name() == st.Name {
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
func (a *Ops) timeouts(plugin string) []admin.CommandTimeout {
	var out []admin.CommandTimeout
	for _, s := range a.cfg.Manager.Commands() {
		if s.Plugin != plugin {
			continue
		}
		out = append(out, admin.CommandTimeout{Command: s.Name(), TimeoutView: admin.NewTimeoutView(s)})
	}
	return out
}
