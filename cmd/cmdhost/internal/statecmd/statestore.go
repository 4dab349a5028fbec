package statecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/state"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// stateStore is the state store as the state subcommands use it: the
// folder opened offline (offlineState), or the running host's admin ops
// (hostState). Both answer by the same code (internal/adminops), and an
// error is the CLI's: its message and exit status.
type stateStore interface {
	namespaces(ctx context.Context) (admin.StateNamespaces, error)
	get(ctx context.Context, ns string, key []byte) (admin.StateItem, error)
	list(ctx context.Context, req admin.StateListRequest) (admin.StatePage, error)
	set(ctx context.Context, req admin.StateSetRequest) (admin.StateSetResult, error)
	del(ctx context.Context, ns string, key []byte, ifVersion uint64) (admin.StateDeleteResult, error)
	// batches splits items into the batches importBatch takes.
	batches(items []admin.StateItem) ([]int, error)
	// importBatch sets items in one commit, all or none.
	importBatch(ctx context.Context, ns string, items []admin.StateItem) (admin.StateImported, error)
	close()
}

// openState opens the store the flags of c name: offline with
// --state-dir or --plugins, else through the host --executor names.
// write says the subcommand writes (offline, it then reads the plugins'
// operator files for their namespaces' bounds).
func openState(c *cli.Context, write bool) (stateStore, error) {
	dir, plugins := c.String("state-dir"), c.String("plugins")
	offline := dir != "" || plugins != ""
	switch {
	case offline && c.IsSet("executor"):
		return nil, cli.Exit("--executor goes through a running host, --state-dir and --plugins open the folder: give one way (CMDHOST_EXECUTOR, CMDHOST_STATE_DIR and CMDHOST_PLUGINS set them too)", base.ExitUsage)
	case dir != "" && plugins != "":
		return nil, cli.Exit("--state-dir names the store, --plugins its plugins folder: give one of them", base.ExitUsage)
	case plugins != "":
		dir = base.DefaultStateDir(plugins)
	case !offline && !c.IsSet("executor"):
		return nil, cli.Exit("say where the state store is: --state-dir DIR or --plugins DIR to open its folder, or --executor ID to go through the running host that holds it", base.ExitUsage)
	case !offline:
		return dialState(c)
	}
	return openOffline(c, dir, plugins)
}

// offlineState is a state folder opened in this process.
type offlineState struct {
	d       *state.Disk
	plugins string // the plugins folder whose operator files bound the plugins' namespaces; "": none
}

// openOffline opens the state folder dir, which must be a store already
// (serve made it): a folder a running host holds is refused, naming the
// way through the host.
func openOffline(c *cli.Context, dir, plugins string) (*offlineState, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, cli.Exit(fmt.Sprintf("state folder %s: not a folder (serve keeps the store in --state-dir, by default the plugins folder's path with .state appended)", dir), base.ExitUsage)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*")); len(m) == 0 {
		return nil, cli.Exit(fmt.Sprintf("state folder %s holds no state store (no Pebble MANIFEST): name the folder serve keeps it in", dir), base.ExitUsage)
	}
	for _, bound := range []string{"state-max-bytes", "state-namespace-bytes", "state-namespace-keys"} {
		if c.IsSet(bound) && boundOf(c, bound) <= 0 {
			return nil, cli.Exit(fmt.Sprintf("--%s must be positive", bound), base.ExitUsage)
		}
	}
	d, err := state.OpenDisk(state.DiskConfig{Dir: dir, Limits: state.Limits{MaxTotalBytes: base.SizeOf(c, "state-max-bytes"),
		Namespace: state.Quota{MaxBytes: base.SizeOf(c, "state-namespace-bytes"), MaxKeys: c.Int64("state-namespace-keys")}}})
	var inUse *state.InUseError
	switch {
	case errors.As(err, &inUse):
		return nil, cli.Exit(fmt.Sprintf("state folder %s is held by a running host (cmdhost serve): go through it with --executor ID (its serve --id; --broker URL when it is not at mqtt://%s; --token-file FILE for its admin token)", dir, hostconn.DefaultListen), base.ExitFailed)
	case err != nil:
		return nil, cli.Exit(err, base.ExitFailed)
	}
	return &offlineState{d: d, plugins: plugins}, nil
}

func (o *offlineState) close() { _ = o.d.Close() }

// refused is the CLI's error of a state error of the store.
func refused(err error, ns string, key []byte) error {
	_, msg := adminops.Refusal(err, ns, key)
	return cli.Exit(msg, base.ExitFailed)
}

func (o *offlineState) namespaces(ctx context.Context) (admin.StateNamespaces, error) {
	out, err := adminops.Namespaces(ctx, o.d)
	if err != nil {
		return out, refused(err, "", nil)
	}
	return out, nil
}

func (o *offlineState) get(ctx context.Context, ns string, key []byte) (admin.StateItem, error) {
	it, err := o.d.Get(ctx, ns, key)
	if err != nil {
		return admin.StateItem{}, refused(err, ns, key)
	}
	return admin.NewStateItem(it, true), nil
}

func (o *offlineState) list(ctx context.Context, req admin.StateListRequest) (admin.StatePage, error) {
	page, err := adminops.ListPage(ctx, o.d, req)
	if err != nil {
		return page, refused(err, req.Namespace, nil)
	}
	return page, nil
}

// quota is the bound of namespace ns: a plugin's operator file's in the
// plugins folder, when one is named and has one; else the store's.
func (o *offlineState) quota(ns string) (state.Quota, error) {
	plugin, _ := admin.CheckNamespace(ns)
	if plugin == "" || o.plugins == "" {
		return state.Quota{}, nil
	}
	op, err := pluginmgr.ReadOperator(filepath.Join(o.plugins, plugin+pluginmgr.OperatorExt))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return state.Quota{}, nil
	case err != nil:
		return state.Quota{}, cli.Exit(fmt.Sprintf("the bound of %s: %v", ns, err), base.ExitFailed)
	case op == nil || op.State == nil:
		return state.Quota{}, nil
	}
	return op.State.Own, nil
}

func (o *offlineState) set(ctx context.Context, req admin.StateSetRequest) (admin.StateSetResult, error) {
	quota, err := o.quota(req.Namespace)
	if err != nil {
		return admin.StateSetResult{}, err
	}
	op, err := adminops.SetOp(req, quota)
	if err != nil {
		return admin.StateSetResult{}, cli.Exit(err, base.ExitUsage)
	}
	res, err := o.d.Commit(ctx, &state.Commit{Ops: []state.Op{op}})
	if err != nil {
		return admin.StateSetResult{}, refused(err, req.Namespace, op.Key)
	}
	return admin.StateSetResult{Version: res[0].Version}, nil
}

func (o *offlineState) del(ctx context.Context, ns string, key []byte, ifVersion uint64) (admin.StateDeleteResult, error) {
	res, err := o.d.Commit(ctx, &state.Commit{Ops: []state.Op{adminops.DeleteOp(ns, key, ifVersion)}})
	if err != nil {
		return admin.StateDeleteResult{}, refused(err, ns, key)
	}
	return admin.StateDeleteResult{Existed: res[0].Existed}, nil
}

// batches splits items by the store's bounds of one commit.
func (o *offlineState) batches(items []admin.StateItem) ([]int, error) {
	l := o.d.Limits()
	var starts []int
	n, size := 0, 0
	for i, it := range items {
		key, _ := it.StateKey.Bytes()
		value, _ := it.StateValue.Bytes()
		if n == 0 || n == l.MaxCommitOps || size+len(key)+len(value) > l.MaxCommitBytes {
			starts = append(starts, i)
			n, size = 0, 0
		}
		n++
		size += len(key) + len(value)
	}
	return starts, nil
}

func (o *offlineState) importBatch(ctx context.Context, ns string, items []admin.StateItem) (admin.StateImported, error) {
	quota, err := o.quota(ns)
	if err != nil {
		return admin.StateImported{}, err
	}
	ops, expired, err := adminops.ImportOps(ns, items, quota, time.Now())
	if err != nil {
		return admin.StateImported{}, cli.Exit(err, base.ExitFailed)
	}
	if len(ops) > 0 {
		if _, err := o.d.Commit(ctx, &state.Commit{Ops: ops}); err != nil {
			return admin.StateImported{}, refused(err, ns, nil)
		}
	}
	return admin.StateImported{Keys: len(ops), Expired: expired}, nil
}

// hostState is the state store of a running host, through its admin
// ops.
type hostState struct {
	h       *hostconn.AdminHost
	timeout time.Duration
	// maxReq is the host's --max-request-bytes, from its stats once an
	// import asks (asked).
	maxReq int
	asked  bool
}

// dialState connects to the host --executor names, with the admin token
// of the flags (every state op but namespaces needs it).
func dialState(c *cli.Context) (*hostState, error) {
	token, err := hostconn.AdminToken(c)
	if err != nil {
		return nil, err
	}
	h, err := hostconn.DialAdmin(c, token)
	if err != nil {
		return nil, err
	}
	return &hostState{h: h, timeout: c.Duration("timeout")}, nil
}

func (s *hostState) close() { s.h.Close() }

// client is the host's client with the request timeout.
func (s *hostState) client() *admin.Client { return s.h.Client.WithTimeout(s.timeout) }

// explain is the CLI's error of op's error.
func (s *hostState) explain(op string, err error) error {
	var refusal *admin.HostError
	if errors.As(err, &refusal) && refusal.Status == abi.StatusServiceUnavailable {
		return cli.Exit(fmt.Sprintf("host %s: %s", s.h.Executor, refusal.Message), base.ExitFailed)
	}
	return s.h.Explain(s.h.Client, op, s.timeout, err)
}

func (s *hostState) namespaces(ctx context.Context) (admin.StateNamespaces, error) {
	out, err := s.client().StateNamespaces(ctx)
	if err != nil {
		return out, s.explain(admin.OpStateNamespaces, err)
	}
	return out, nil
}

func (s *hostState) get(ctx context.Context, ns string, key []byte) (admin.StateItem, error) {
	it, err := s.client().StateGet(ctx, ns, key)
	if err != nil {
		return it, s.explain(admin.OpStateGet, err)
	}
	return it, nil
}

func (s *hostState) list(ctx context.Context, req admin.StateListRequest) (admin.StatePage, error) {
	page, err := s.client().StateList(ctx, req)
	if err != nil {
		return page, s.explain(admin.OpStateList, err)
	}
	return page, nil
}

func (s *hostState) set(ctx context.Context, req admin.StateSetRequest) (admin.StateSetResult, error) {
	res, err := s.client().StateSet(ctx, req)
	if err != nil {
		return res, s.explain(admin.OpStateSet, err)
	}
	return res, nil
}

func (s *hostState) del(ctx context.Context, ns string, key []byte, ifVersion uint64) (admin.StateDeleteResult, error) {
	res, err := s.client().StateDelete(ctx, ns, key, ifVersion)
	if err != nil {
		return res, s.explain(admin.OpStateDelete, err)
	}
	return res, nil
}

// batches splits items by the store's bounds of one commit and the
// host's and broker's bound of one request (the host's from its stats).
func (s *hostState) batches(items []admin.StateItem) ([]int, error) {
	if !s.asked {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		st, err := s.client().Stats(ctx)
		if err != nil {
			return nil, s.explain(admin.OpStats, err)
		}
		s.maxReq, s.asked = st.MaxRequestBytes, true
	}
	starts, err := s.h.Client.Batches(items, s.maxReq)
	if err != nil {
		return nil, cli.Exit(err, base.ExitFailed)
	}
	return starts, nil
}

func (s *hostState) importBatch(ctx context.Context, ns string, items []admin.StateItem) (admin.StateImported, error) {
	res, err := s.client().StateImport(ctx, ns, items)
	if err != nil {
		return res, s.explain(admin.OpStateImport, err)
	}
	return res, nil
}

// boundOf is the value of the state bound flag called name: a size or a
// count of keys.
func boundOf(c *cli.Context, name string) int64 {
	if base.IsSizeFlag(base.FlagOf(c, name)) {
		return base.SizeOf(c, name)
	}
	return c.Int64(name)
}
