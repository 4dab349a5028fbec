package plugins

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// Defaults of Config.
const (
	DefaultDebounce     = 250 * time.Millisecond
	DefaultDrainTimeout = 30 * time.Second
)

// ErrClosed is returned by the Manager's methods once Close has begun.
var ErrClosed = errors.New("plugins: manager closed")

// Config configures a Manager. Zero fields take defaults.
type Config struct {
	// Dir is the plugins folder: every Dir/NAME.wasm is the plugin NAME.
	Dir string
	// Engine loads the plugin versions. Required.
	Engine *wasm.Engine
	// Plugin configures every plugin version.
	Plugin wasm.PluginConfig
	// Defaults are the host's settings of the commands (Command): what
	// applies where neither an operator file nor a module sets them.
	Defaults Defaults
	// Logger receives loads, reloads, removals and failures; nil discards.
	Logger *slog.Logger
	// Debounce is how long a file must be quiet (no create, write, rename
	// or remove event) before Watch acts on it. Default 250 ms.
	Debounce time.Duration
	// DrainTimeout bounds how long a replaced or removed version may take
	// to finish its calls in flight; calls still running then are stopped.
	// Default 30 s.
	DrainTimeout time.Duration
	// Trust are the keys a module must be signed by, one of them, to be
	// loaded (its signature file NAME.wasm.sig; origin.go); none: no
	// signature is needed.
	Trust []ed25519.PublicKey
	// TriggerStats reads what the host did with a trigger's messages, for
	// Status; nil reads as zero.
	TriggerStats func(trigger string) TriggerCounters
}

// Manager owns the plugins folder and serves, per command, the current
// version of the plugin that declares it. Its methods are safe for
// concurrent use.
//
// # Concurrency
//
// Three kinds of lock, always taken in this order:
//
//   - a per-plugin lock (entry.lock, a one-slot channel so that waiting for
//     it honours a context) serializes everything that changes one plugin:
//     a watcher event, Reload, Remove and LoadAll's turn for that file. Two
//     reloads of one file never interleave, and a load of one plugin never
//     waits for the load of another.
//   - Manager.mu guards the tables: the entries, their fields and the
//     publication of the served-commands snapshot. It is held only for
//     bookkeeping, never while reading a file, compiling, closing or
//     calling back, so loads run outside it and in parallel.
//   - notifyMu serializes the OnChange callbacks; it is taken with no
//     other lock held.
//
// The hot path takes no lock at all: Lookup and Commands read an immutable
// snapshot (command → version) through an atomic pointer, which a commit
// replaces wholesale under Manager.mu. That replacement is the swap.
//
// # Swap and drain
//
// A load reads the file, hashes it (sha256) and, if the content is new,
// has the engine compile, validate and warm a version beside the one
// serving. Only then, under Manager.mu, is it checked against the commands
// of the other plugins and published; the old version is handed to a
// goroutine that closes it with Plugin.Close under a DrainTimeout context,
// which lets the calls in flight finish first. A load that fails leaves
// the tables as they were: the old version keeps serving.
type Manager struct {
	cfg Config
	log *slog.Logger

	// ctx lives until Close; background work (clash retries, Watch) stops
	// with it.
	ctx    context.Context
	cancel context.CancelFunc

	served atomic.Pointer[table]

	mu       sync.Mutex
	entries  map[string]*entry // by plugin name
	onChange []func()
	seq      uint64 // bumped when the served table changes in substance
	closed   bool
	watching bool
	watchErr error          // why the running Watch does not watch the folder now (watch.go); nil when it does
	ops      sync.WaitGroup // operations in progress (Close waits for them)
	drains   sync.WaitGroup // old versions draining

	// unpublished are the plugins a LoadAll committed as first loads and
	// has not yet published (batch.go): their commands and topics, which
	// the clash checks count as served.
	unpublished unpublished

	notifyMu sync.Mutex
	notified uint64 // the seq the callbacks last ran for

	badMu    sync.Mutex
	badNames map[string]bool // module files logged for a name the host does not serve (noteBadName)
}

// table is an immutable snapshot of what is served.
type table struct {
	byCommand map[string]*wasm.Plugin
	commands  []Command         // sorted by name
	digests   map[string]string // module digest by plugin name
	topics    []servedTopic     // the commands' request topics (topics.go), by plugin and command
}

var emptyTable = &table{byCommand: map[string]*wasm.Plugin{}}

// entry is one plugin name. Fields other than name and lock are guarded by
// Manager.mu; they change only while lock is held as well.
type entry struct {
	name string
	lock chan struct{}

	cur      *version       // the version serving and what it was made from; nil when none
	refused  refusal        // the content not to load again unasked; zero when none
	draining []*wasm.Plugin // replaced versions finishing their calls
	loading  bool           // a first load is running

	loads, reloads, loadFailures int
	lastErr                      error
	lastErrAt                    time.Time
	retired                      wasm.Stats // counters of closed versions
}

func (e *entry) acquire(ctx context.Context) error {
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *entry) release() { <-e.lock }

// version is a plugin version serving and what it was made from. An
// entry's version is set and cleared as a whole.
type version struct {
	p         *wasm.Plugin
	topics    []commandTopic // p's commands' request topics
	digest    string         // of the module file's content
	op        *Operator      // the operator file applied; nil when none
	opDigest  string         // of op's file content; "" when none
	sigDigest string         // of its signature file, on a host that checks them
	since     time.Time      // when p started serving
}

// key identifies the content of both files of v (see load.key).
func (v *version) key() string { return contentKey(v.digest, v.opDigest, v.sigDigest) }

// refusal is content of a plugin's files the manager does not load again
// until they change (or, for refusedClash, a command or topic is freed),
// and why. An entry's refusal is set and cleared as a whole.
type refusal struct {
	key    string // load.key of the content; "" when nothing is refused
	digest string // the module file's part of key
	reason refusalReason
	// op and opDigest are the operator file that disabled the plugin
	// (refusedDisabled).
	op       *Operator
	opDigest string
}

// refusalReason says why content is refused.
type refusalReason int

const (
	refusedNone     refusalReason = iota
	refusedFailed                 // its load failed
	refusedClash                  // a command or topic was taken: retried when one is freed
	refusedRemoved                // removed by Remove while the file stays
	refusedDisabled               // the operator file says "enabled": false
)

// is reports whether the refusal's reason is r.
func (f refusal) is(r refusalReason) bool { return f.reason == r }

// contentKey identifies the content of a plugin's module, operator file
// and signature file (its digest on a host that checks signatures, else
// ""): a change of any is a change of the plugin.
func contentKey(module, operator, signature string) string {
	return module + "+" + operator + "+" + signature
}

// withDefaults resolves the zero fields (package setting's rule).
func (c Config) withDefaults() Config {
	c.Logger = logx.OrDiscard(c.Logger)
	c.Debounce = setting.Or(c.Debounce, DefaultDebounce)
	c.DrainTimeout = setting.Or(c.DrainTimeout, DefaultDrainTimeout)
	c.Defaults = c.Defaults.withDefaults()
	if c.Defaults.Concurrency <= 0 {
		c.Defaults.Concurrency = cmp.Or(max(c.Plugin.PoolSize, 0), wasm.DefaultPoolSize)
	}
	return c
}

// NewManager returns a Manager for cfg.Dir; it serves nothing until
// LoadAll, Watch or Reload. It panics when cfg.Engine is nil.
func NewManager(cfg Config) *Manager {
	if cfg.Engine == nil {
		panic("plugins.NewManager: Config.Engine is nil")
	}
	cfg = cfg.withDefaults()
	m := &Manager{cfg: cfg, log: cfg.Logger, entries: map[string]*entry{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.served.Store(emptyTable)
	return m
}

// Lookup returns the version serving command now. To run a command, use
// Invoke, which handles the race with reloads.
//
// A caller of Lookup races with reloads: it may look up a version just
// before a swap and call it after the old version began to close, and then
// Plugin.Invoke fails with wasm.KindClosed without running the guest.
// Invoke (InvokeServing) then looks up again and calls the version found,
// if any. A version is closed only after its successor was published, so
// one retry suffices unless yet another reload closed that successor in
// between (reloads a few milliseconds apart); retrying while Lookup
// returns a version other than the one that failed, a bounded number of
// times, covers that too. The request ran nowhere, so retrying is safe
// even for a non-idempotent command. Once Lookup finds nothing, the
// command is no longer served (removed, or the Manager closed).
func (m *Manager) Lookup(command string) (*wasm.Plugin, bool) {
	p, ok := m.served.Load().byCommand[command]
	return p, ok
}

// Origin returns the plugin serving command now and the sha256 of its
// module, from the same snapshot as Lookup (no lock): timeout events name
// them.
func (m *Manager) Origin(command string) (plugin, digest string, ok bool) {
	t := m.served.Load()
	p, ok := t.byCommand[command]
	if !ok {
		return "", "", false
	}
	return p.Name(), t.digests[p.Name()], true
}

// Commands returns the commands served now, sorted by name. The caller
// must not modify the commands' slices.
func (m *Manager) Commands() []Command {
	return append([]Command(nil), m.served.Load().commands...)
}

// Triggers returns the triggers of the plugins served now, subscribed or
// not (Command.Trigger.State), sorted by name.
func (m *Manager) Triggers() []Command {
	var out []Command
	for _, c := range m.served.Load().commands {
		if c.Trigger != nil {
			out = append(out, c)
		}
	}
	return out
}

// Command returns the command, or trigger, served now under name.
func (m *Manager) Command(name string) (Command, bool) {
	cmds := m.served.Load().commands
	i := sort.Search(len(cmds), func(i int) bool { return cmds[i].Name() >= name })
	if i < len(cmds) && cmds[i].Name() == name {
		return cmds[i], true
	}
	return Command{}, false
}

// OnChange registers f, called after the set of served commands or the
// settings of one of them changed: a load, a reload that changes the
// description, a removal. A reload that changes only the code does not
// call it (Lookup returns the new version anyway). Calls are serialized,
// made with no lock held, and a change is followed by a call that starts
// after it; the method that made the change returns after that call. f
// must not call Reload, Remove, LoadAll or Close synchronously. Close
// does not call f.
func (m *Manager) OnChange(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onChange = append(m.onChange, f)
}

// LoadAll loads every Dir/*.wasm not loaded yet or changed since (dotfiles
// are skipped), several at once, and stops serving the plugins whose file
// is gone. A command declared by two plugins, or two overlapping topics,
// go to the one whose file name sorts first; the other is not loaded and
// its error names both. It returns the problems met, in file name order.
func (m *Manager) LoadAll(ctx context.Context) []error {
	if err := m.begin(); err != nil {
		return []error{err}
	}
	defer m.ops.Done()
	return m.loadAll(ctx)
}

func (m *Manager) loadAll(ctx context.Context) []error {
	names, err := m.scan()
	if err != nil {
		return []error{err}
	}
	names = m.withKnown(names)

	// Loads run in parallel; commits run in file name order, so that the
	// first file keeps a contested command.
	errs := make([]error, len(names))
	turns := make([]chan struct{}, len(names)+1)
	for i := range turns {
		turns[i] = make(chan struct{})
	}
	close(turns[0])
	stopPublishing := m.publishWhileLoading()
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(turns[i+1])
			e := m.entryFor(name)
			if err := e.acquire(ctx); err != nil {
				errs[i] = fmt.Errorf("plugin %s: %w", name, err)
				<-turns[i]
				return
			}
			sem <- struct{}{}
			l := m.prepare(ctx, e, syncChanged)
			<-sem
			<-turns[i]
			res, err := m.commitBatched(ctx, e, l)
			e.release()
			m.settle(res)
			errs[i] = err
		}()
	}
	wg.Wait()
	stopPublishing()
	if m.publishBatch() {
		m.retryClashed()
	}
	m.notify()
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Reload loads the plugin from its file now, with the settings of its
// operator file, even when neither changed (a fresh version with fresh
// instances), and swaps it in: the old version drains. A load that fails
// (or an invalid operator file) leaves the old version serving and
// returns the error. When the file is gone, or the operator file says
// "enabled": false, the plugin stops being served and Reload says so.
// Reload also brings back a plugin removed by Remove.
func (m *Manager) Reload(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := m.begin(); err != nil {
		return err
	}
	defer m.ops.Done()
	return m.syncFile(ctx, name, syncForce)
}

// Remove stops serving the plugin, as if its file were deleted, without
// deleting the file: its commands go at once and its version closes once
// its calls in flight are done. The file is loaded again when its content
// (or its operator file's) changes, or by Reload. A plugin that serves
// nothing because it failed (a refused Install of a plugin new here, a
// file that does not load) has its failure cleared: Status no longer
// lists it once its file is gone.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := m.begin(); err != nil {
		return err
	}
	defer m.ops.Done()
	m.mu.Lock()
	e := m.entries[name]
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("plugin %s is not loaded", name)
	}
	if err := e.acquire(ctx); err != nil {
		return fmt.Errorf("plugin %s: %w", name, err)
	}
	_, statErr := os.Lstat(m.path(name)) // read before Manager.mu is taken
	m.mu.Lock()
	if e.cur == nil && e.lastErr != nil && !e.loading {
		m.clearFailure(e, statErr == nil)
		m.mu.Unlock()
		e.release()
		return nil
	}
	if e.cur == nil {
		m.mu.Unlock()
		e.release()
		return fmt.Errorf("plugin %s is not being served", name)
	}
	res := outcome{e: e, old: e.cur.p}
	e.refused = refusal{key: e.cur.key(), reason: refusedRemoved}
	e.draining = append(e.draining, e.cur.p)
	e.cur = nil
	res.freed = m.publish()
	m.mu.Unlock()
	e.release()
	m.log.Info("plugin removed", "plugin", name, "file", m.path(name))
	m.settle(res)
	m.notify()
	return nil
}

// clearFailure forgets the failure of a plugin that serves nothing (a
// refused install, a file that does not load), for Remove: with no file
// in the folder it is no longer listed; a file there stays refused as a
// removed plugin's is, until it changes or Reload. Manager.mu is held.
func (m *Manager) clearFailure(e *entry, fileThere bool) {
	e.lastErr, e.lastErrAt = nil, time.Time{}
	if fileThere {
		e.refused = refusal{key: e.refused.key, reason: refusedRemoved}
	} else {
		e.refused = refusal{}
	}
	m.log.Info("plugin's failure cleared: nothing served, nothing retried", "plugin", e.name)
}

// Close stops watching, waits for the operations in progress, stops
// serving every plugin and closes every version, letting calls in flight
// finish until ctx is done (then they are stopped). It also waits, until
// ctx is done, for versions replaced earlier to finish draining. Close does
// not call the OnChange callbacks.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel() // stops Watch and the loads it started
	m.ops.Wait()

	m.mu.Lock()
	var current []*wasm.Plugin
	var owners []*entry
	for _, e := range m.entries {
		if e.cur != nil {
			current = append(current, e.cur.p)
			owners = append(owners, e)
			e.draining = append(e.draining, e.cur.p)
			e.cur = nil
		}
	}
	m.publish()
	m.mu.Unlock()

	errs := make([]error, len(current))
	var wg sync.WaitGroup
	for i, p := range current {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Close(ctx)
			m.retire(owners[i], p)
		}()
	}
	wg.Wait()

	drained := make(chan struct{})
	go func() { m.drains.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("waiting for replaced versions to drain: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}

// begin registers an operation; Close waits for it.
func (m *Manager) begin() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.ops.Add(1)
	return nil
}

type syncMode int

const (
	// syncChanged loads the file when its content differs from the version
	// serving (or from content refused before): watcher events, LoadAll.
	syncChanged syncMode = iota
	// syncForce loads whatever the file holds: Reload.
	syncForce
	// syncRetry loads a plugin refused for a clash (a first version or a
	// new one), now that a command or a topic was freed.
	syncRetry
)

// load is the work done outside Manager.mu: the file read and, when
// needed, the new version loaded beside the old.
type load struct {
	path     string
	digest   string // of the module file
	opPath   string // the operator file's path
	opDigest string // of the operator file; "" when there is none
	// sig is the signature file (nil: none) and sigDigest its digest, read
	// only by a host that checks signatures (Config.Trust); sigErr is why
	// it could not be read.
	sig       []byte
	sigDigest string
	sigErr    error
	op        *Operator      // the operator file, valid; nil when none or invalid
	p         *wasm.Plugin   // the new version, not yet published
	topics    []commandTopic // p's commands' request topics, checked
	gone      bool           // the module file does not exist
	off       bool           // the operator file says "enabled": false: not loaded
	skip      bool           // nothing to do
	current   bool           // the files hold the content serving (skip is set)
	err       error
	took      time.Duration
}

// key identifies the content of the files read: a refused version is
// loaded again when one of them changes, its signature included (a
// module refused unsigned, then signed).
func (l *load) key() string { return contentKey(l.digest, l.opDigest, l.sigDigest) }

// readSignature reads the plugin's signature file into l, on a host that
// checks signatures.
func (l *load) readSignature(m *Manager, name string) {
	if len(m.cfg.Trust) == 0 {
		return
	}
	l.sig, l.sigErr = readSignature(m.sigPath(name))
	if l.sigErr == nil && l.sig != nil {
		l.sigDigest = sha(l.sig)
	}
}

// outcome is what remains to do after a commit, with no lock held.
type outcome struct {
	e       *entry
	old     *wasm.Plugin // version to drain
	discard *wasm.Plugin // new version refused after its load: close
	freed   bool         // a command stopped being served, or moved to another topic
}

// syncFile brings one plugin in line with its file.
func (m *Manager) syncFile(ctx context.Context, name string, mode syncMode) error {
	e := m.entryFor(name)
	if err := e.acquire(ctx); err != nil {
		return fmt.Errorf("plugin %s: %w", name, err)
	}
	l := m.prepare(ctx, e, mode)
	res, err := m.commit(ctx, e, l)
	e.release()
	m.settle(res)
	m.notify()
	if err == nil && mode == syncForce {
		switch {
		case l.gone:
			err = fmt.Errorf("plugin %s: %s does not exist; the plugin is not served", name, l.path)
		case l.off:
			err = fmt.Errorf("plugin %s is disabled by %s (\"enabled\": false); it is not served", name, l.opPath)
		}
	}
	return err
}

// prepare reads the plugin's files (the module and its operator file) and
// loads a new version with the operator's settings when mode says so. The
// caller holds e's lock.
func (m *Manager) prepare(ctx context.Context, e *entry, mode syncMode) load {
	l := load{path: m.path(e.name), opPath: m.opPath(e.name)}
	bin, err := wasm.ReadModule(l.path, m.cfg.Plugin.MaxModuleBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.gone = true
		return l
	case err != nil:
		l.err = fmt.Errorf("plugin %s: %w", e.name, err)
		return l
	}
	l.digest = sha(bin)
	opErr, err := l.readOperator()
	if err != nil {
		l.err = fmt.Errorf("plugin %s: operator file: %w", e.name, err)
		return l
	}
	l.readSignature(m, e.name)

	m.mu.Lock()
	l.current = e.cur != nil && e.cur.key() == l.key()
	switch mode {
	case syncChanged:
		l.skip = l.current || (e.cur == nil && e.refused.key == l.key())
	case syncRetry:
		// A refused new version is retried as a refused first one is; a
		// file gone back to the content serving has nothing to retry.
		l.skip = l.current || !e.refused.is(refusedClash)
	}
	l.current = l.current && l.skip
	if !l.skip && e.cur == nil && opErr == nil && !l.off {
		e.loading = true
	}
	m.mu.Unlock()
	switch {
	case l.skip || l.off:
		return l
	case opErr != nil:
		l.op, l.err = nil, fmt.Errorf("plugin %s: %w", e.name, opErr)
		return l
	}
	err = l.sigErr
	if err == nil {
		err = m.checkOrigin(e.name, l.digest, l.op, l.sig)
	}
	if err != nil {
		l.err = err
		return l
	}
	start := time.Now()
	l.p, l.topics, l.err = m.loadVersion(ctx, e.name, bin, l.op)
	l.took = time.Since(start)
	return l
}

// readOperator reads the operator file at l.opPath into l: its digest,
// the file parsed (l.op) and whether it disables the plugin (l.off). No
// file is no error. A file that cannot be read is err; one that does not
// parse is opErr (l.op stays nil).
func (l *load) readOperator() (opErr, err error) {
	opBin, err := readOperatorFile(l.opPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	l.opDigest = sha(opBin)
	l.op, opErr = ParseOperator(l.opPath, opBin)
	l.off = opErr == nil && !l.op.Enabled
	return opErr, nil
}

// loadVersion loads bin as a version of plugin name with the settings of
// op (nil: none) and checks it as the host does before serving it: the
// operator file's commands exist, the commands' topics are the host's to
// give and do not overlap. The clash with other plugins is checked at
// commit (or by Check).
func (m *Manager) loadVersion(ctx context.Context, name string, bin []byte, op *Operator) (*wasm.Plugin, []commandTopic, error) {
	p, err := m.cfg.Engine.Load(ctx, name, bin, op.pluginConfig(m.cfg.Plugin))
	if err != nil {
		return nil, nil, err
	}
	err = op.CheckCommands(p.Description())
	var topics []commandTopic
	if err == nil {
		topics, err = commandTopics(p.Description())
	}
	if err != nil {
		_ = p.Close(context.Background()) // never served: nothing in flight
		return nil, nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	return p, topics, nil
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// commit publishes what prepare found. The caller holds e's lock.
func (m *Manager) commit(ctx context.Context, e *entry, l load) (outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.commitLocked(ctx, e, l, false)
}

// commitLocked is commit with Manager.mu held; batched, a first load is
// left unpublished (batch.go).
func (m *Manager) commitLocked(ctx context.Context, e *entry, l load, batched bool) (outcome, error) {
	res := outcome{e: e}
	e.loading = false
	switch {
	case l.skip:
		if l.current && e.refused.key != "" {
			// The refused content is no longer in the files: its error
			// would be stale.
			m.log.Info("plugin's file is back to the version serving: the refused version is forgotten", "plugin", e.name,
				"digest", short(l.digest))
			e.refused = refusal{}
			e.lastErr, e.lastErrAt = nil, time.Time{}
		}
		return res, nil

	case l.gone:
		if e.cur != nil {
			res.old = e.cur.p
			e.draining = append(e.draining, e.cur.p)
			m.log.Info("plugin file removed: plugin no longer served", "plugin", e.name, "file", l.path)
		}
		e.cur, e.refused = nil, refusal{}
		e.lastErr, e.lastErrAt = nil, time.Time{}
		res.freed = m.publish()
		return res, nil

	case l.off:
		if e.cur != nil {
			res.old = e.cur.p
			e.draining = append(e.draining, e.cur.p)
		}
		if e.cur != nil || !e.refused.is(refusedDisabled) {
			m.log.Info("plugin disabled by its operator file (\"enabled\": false): not served", "plugin", e.name,
				"operator", l.opPath)
		}
		e.cur = nil
		e.refused = refusal{key: l.key(), reason: refusedDisabled, op: l.op, opDigest: l.opDigest}
		e.lastErr, e.lastErrAt = nil, time.Time{}
		res.freed = m.publish()
		return res, nil

	case l.err != nil:
		if ctx.Err() != nil { // canceled, not the file's fault
			return res, l.err
		}
		m.fail(e, l, l.err, false)
		return res, l.err
	}

	clash := m.clash(e.name, l.p)
	if clash == nil {
		clash = m.topicClash(e.name, l.topics)
	}
	if clash != nil {
		res.discard = l.p
		m.fail(e, l, clash, true)
		return res, clash
	}

	first := e.cur == nil
	if first {
		e.loads++
	} else {
		e.reloads++
		res.old = e.cur.p
		e.draining = append(e.draining, e.cur.p)
	}
	e.cur = &version{p: l.p, topics: l.topics, digest: l.digest, op: l.op, opDigest: l.opDigest, sigDigest: l.sigDigest, since: time.Now()}
	e.refused = refusal{}
	e.lastErr, e.lastErrAt = nil, time.Time{}
	if batched && first {
		m.unpublished.add(e.name, e.cur)
	} else {
		res.freed = m.publish()
	}
	msg := "plugin loaded"
	if res.old != nil {
		msg = "plugin reloaded: new version serving, old one draining"
	}
	attrs := []any{"plugin", e.name, "file", l.path, "digest", short(l.digest),
		"commands", commandNames(l.p), "took", l.took.Round(time.Millisecond)}
	if l.op != nil {
		attrs = append(attrs, "operator", l.opPath, "operator_digest", short(l.opDigest))
	}
	m.log.Info(msg, attrs...)
	return res, nil
}

// fail records a refused load. Manager.mu is held.
func (m *Manager) fail(e *entry, l load, err error, clashed bool) {
	e.loadFailures++
	e.lastErr, e.lastErrAt = err, time.Now()
	e.refused = refusal{key: l.key(), digest: l.digest, reason: refusedFailed}
	if clashed {
		e.refused.reason = refusedClash
	}
	attrs := []any{"plugin", e.name, "file", l.path, "digest", short(l.digest)}
	if l.opDigest != "" {
		attrs = append(attrs, "operator", l.opPath, "operator_digest", short(l.opDigest))
	}
	attrs = append(attrs, "err", err)
	if e.cur != nil {
		m.log.Error("plugin reload failed: the old version keeps serving", attrs...)
		return
	}
	m.log.Error("plugin load failed", attrs...)
}

// clash returns a *ClashError when p declares a command that another
// plugin serves now. Manager.mu is held.
func (m *Manager) clash(name string, p *wasm.Plugin) error {
	t := m.served.Load()
	for _, c := range p.Description().Commands {
		other, ok := m.unpublished.commands[c.Name]
		if !ok {
			var op *wasm.Plugin
			if op, ok = t.byCommand[c.Name]; ok {
				other = op.Name()
			}
		}
		if ok && other != name {
			err := &ClashError{Plugin: name, Command: c.Name, Other: other, OtherCommand: c.Name}
			if e := m.entries[name]; e != nil && e.cur != nil {
				err.msg = fmt.Sprintf("plugin %s: command %s is already served by plugin %s; the new version of %s is refused and the old one keeps serving",
					name, c.Name, other, name)
			} else {
				err.msg = fmt.Sprintf("plugin %s: command %s is already served by plugin %s; %s not loaded",
					name, c.Name, other, name)
			}
			return err
		}
	}
	return nil
}

// publish rebuilds the served table from the entries and stores it; it
// bumps seq when the commands or their settings changed and reports
// whether a command stopped being served or its topic changed (either
// may let a plugin refused for a clash in). Manager.mu is held.
func (m *Manager) publish() (freed bool) {
	old := m.served.Load()
	t := &table{byCommand: map[string]*wasm.Plugin{}, digests: map[string]string{}}
	for _, e := range m.entries {
		v := e.cur
		if v == nil {
			continue
		}
		t.digests[e.name] = v.digest
		for _, c := range v.p.Description().Commands {
			t.byCommand[c.Name] = v.p
			t.commands = append(t.commands, Resolve(e.name, c, v.op, m.cfg.Defaults))
		}
		for _, ct := range v.topics {
			t.topics = append(t.topics, servedTopic{plugin: e.name, commandTopic: ct})
		}
	}
	sort.Slice(t.commands, func(i, j int) bool { return t.commands[i].Name() < t.commands[j].Name() })
	resolveOverlaps(t.commands, old.commands)
	slices.SortFunc(t.topics, func(a, b servedTopic) int { // a clash names the same plugin every time
		return cmp.Or(strings.Compare(a.plugin, b.plugin), strings.Compare(a.command, b.command))
	})
	m.served.Store(t)
	m.unpublished = unpublished{}
	if !reflect.DeepEqual(old.commands, t.commands) {
		m.seq++
	}
	now := map[string]bool{}
	for _, st := range t.topics {
		now[st.command+"\x00"+st.source] = true
	}
	for _, st := range old.topics {
		if !now[st.command+"\x00"+st.source] {
			return true
		}
	}
	return false
}

// settle does, with no lock held, what a commit left to do: close a
// refused version, drain a replaced one, retry plugins refused for a
// clash when a command was freed.
func (m *Manager) settle(res outcome) {
	if res.discard != nil {
		_ = res.discard.Close(context.Background()) // never served: nothing in flight
	}
	if res.old != nil {
		m.drain(res.e, res.old)
	}
	if res.freed {
		m.retryClashed()
	}
}

// drain closes a replaced version in the background once its calls in
// flight are done, or at DrainTimeout.
func (m *Manager) drain(e *entry, p *wasm.Plugin) {
	m.drains.Add(1)
	go func() {
		defer m.drains.Done()
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.DrainTimeout)
		defer cancel()
		start := time.Now()
		if err := p.Close(ctx); err != nil {
			m.log.Warn("old plugin version did not drain in time: calls still running were stopped",
				"plugin", e.name, "drain_timeout", m.cfg.DrainTimeout, "err", err)
		} else {
			m.log.Debug("old plugin version drained and closed", "plugin", e.name, "took", time.Since(start).Round(time.Millisecond))
		}
		m.retire(e, p)
	}()
}

// retire forgets a closed version, keeping its counters.
func (m *Manager) retire(e *entry, p *wasm.Plugin) {
	st := p.Stats()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, d := range e.draining {
		if d == p {
			e.draining = append(e.draining[:i], e.draining[i+1:]...)
			break
		}
	}
	e.retired.Calls += st.Calls
	e.retired.Failures += st.Failures
	e.retired.ErrorReplies += st.ErrorReplies
	e.retired.Replaced += st.Replaced
	e.retired.OutputDroppedLines += st.OutputDroppedLines
	e.retired.OutputDroppedBytes += st.OutputDroppedBytes
	e.retired.MountRefusals += st.MountRefusals
	e.retired.Fuel.Add(st.Fuel)
	e.retired.StateOps.Add(st.StateOps)
}

// retryClashed loads again, in file name order and in the background, the
// plugins refused because a command or a topic was taken: those with no
// version serving and those whose new version was refused while an older
// one serves (its file is not touched again when the other plugin goes,
// so no watcher event would ever bring it).
func (m *Manager) retryClashed() {
	m.mu.Lock()
	var names []string
	for _, e := range m.entries {
		if e.refused.is(refusedClash) {
			names = append(names, e.name)
		}
	}
	if len(names) == 0 || m.closed {
		m.mu.Unlock()
		return
	}
	m.ops.Add(1)
	m.mu.Unlock()
	sortByFile(names)
	go func() {
		defer m.ops.Done()
		for _, name := range names {
			if err := m.syncFile(m.ctx, name, syncRetry); err == nil {
				m.log.Debug("plugin retried after a command was freed", "plugin", name)
			}
		}
	}()
}

// notify runs the OnChange callbacks when the table changed since they
// last ran.
func (m *Manager) notify() {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	seq, fs := m.seq, append([]func(){}, m.onChange...)
	m.mu.Unlock()
	if seq == m.notified {
		return
	}
	m.notified = seq
	for _, f := range fs {
		f()
	}
}

// entryFor returns the entry of name, creating it.
func (m *Manager) entryFor(name string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[name]
	if !ok {
		e = &entry{name: name, lock: make(chan struct{}, 1)}
		m.entries[name] = e
	}
	return e
}

func (m *Manager) path(name string) string { return filepath.Join(m.cfg.Dir, name+".wasm") }

// opPath is the path of the plugin's operator file.
func (m *Manager) opPath(name string) string { return filepath.Join(m.cfg.Dir, name+OperatorExt) }

// scan lists the plugin names of Dir's files, sorted by file name.
func (m *Manager) scan() ([]string, error) {
	des, err := os.ReadDir(m.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("plugins folder: %w", err)
	}
	var names []string
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		if name, ok := pluginName(de.Name()); ok {
			names = append(names, name)
		} else if name, wasm := strings.CutSuffix(de.Name(), ".wasm"); wasm && !strings.HasPrefix(name, ".") {
			m.noteBadName(name)
		}
	}
	sortByFile(names)
	return names, nil
}

// noteBadName logs, once per name, a module file the folder holds under a
// name the host does not serve (CheckName).
func (m *Manager) noteBadName(name string) {
	m.badMu.Lock()
	defer m.badMu.Unlock()
	if m.badNames == nil {
		m.badNames = map[string]bool{}
	}
	if m.badNames[name] || len(m.badNames) >= 64 {
		return
	}
	m.badNames[name] = true
	m.log.Warn("module file not served: its name is not a plugin name", "file", strconv.Quote(name+".wasm"), "why", CheckName(name).Error())
}

// withKnown adds the names of known plugins to names, sorted by file
// name, so that a rescan also notices files that are gone.
func (m *Manager) withKnown(names []string) []string {
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	m.mu.Lock()
	for n, e := range m.entries {
		if !seen[n] && (e.cur != nil || e.lastErr != nil || e.refused.is(refusedRemoved) || e.refused.is(refusedDisabled)) {
			names = append(names, n)
		}
	}
	m.mu.Unlock()
	sortByFile(names)
	return names
}

// sortByFile sorts plugin names by their file names ("a-b.wasm" sorts
// before "a.wasm"), the order in which a contested command is granted.
func sortByFile(names []string) {
	sort.Slice(names, func(i, j int) bool { return names[i]+".wasm" < names[j]+".wasm" })
}

func commandNames(p *wasm.Plugin) []string {
	var out []string
	for _, c := range p.Description().Commands {
		out = append(out, c.Name)
	}
	return out
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
