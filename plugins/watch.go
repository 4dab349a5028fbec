package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch follows the plugins folder until ctx is done or Close is called,
// then returns nil once the loads it started have stopped; it returns an
// error when the folder cannot be watched at the start, or when the
// watcher itself stops. A create, write, rename or remove of a
// NAME.wasm file or of its operator file NAME.json (dotfiles and other
// names, such as the installer's NAME.wasm.tmp, are ignored) is acted on
// once the plugin's files have been quiet for Config.Debounce: both files
// are read and hashed (sha256); when the content of either differs from
// the version serving, a new version is loaded beside the old one with
// the operator file's settings and swapped in; when the module file is
// gone, or the operator file says "enabled": false, the plugin stops being
// served. Changes of different plugins are handled in parallel, those of
// one plugin in order.
//
// On start, once the folder is watched, Watch does what LoadAll does (its
// failures are logged and shown by Status), so that nothing changed
// between LoadAll and Watch goes unnoticed and a contested command goes
// to the file that sorts first even without LoadAll; files whose content
// is already served cost a read and a hash. When the kernel's event queue
// overflows, every file is checked again as if it had changed.
//
// When the folder itself is removed or renamed away (rm -rf, a deploy
// that swaps folders), the plugins loaded keep serving as they are, and
// WatchErr says hot reload is off, until a folder appears again at the
// path: Watch then watches it and syncs with it as on start (new modules
// load, plugins whose file is not in it stop being served). It learns of
// the new folder from the parent folder's events and, where those say
// nothing (the parent gone as well, a folder behind a symlink, a network
// file system), by looking every rewatchPoll.
//
// Only one Watch may run at a time.
func (m *Manager) Watch(ctx context.Context) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.ops.Done()
	m.mu.Lock()
	if m.watching {
		m.mu.Unlock()
		return errors.New("plugins: Watch is already running")
	}
	m.watching = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.watching, m.watchErr = false, nil
		m.mu.Unlock()
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // Close stops Watch
	defer stop()

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching the plugins folder: %w", err)
	}
	defer w.Close()
	if err := w.Add(m.cfg.Dir); err != nil {
		return fmt.Errorf("watching the plugins folder %s: %w", m.cfg.Dir, err)
	}

	d := &debouncer{m: m, ctx: ctx, fire: make(chan fired), timers: map[string]*pending{}}
	defer d.stopAll()
	var syncs sync.WaitGroup
	defer syncs.Wait() // after cancel: the loads in progress give up
	defer cancel()

	m.loadAll(ctx) // failures are logged and kept in Status
	m.log.Info("watching the plugins folder", "dir", m.cfg.Dir, "debounce", m.cfg.Debounce)
	dir := filepath.Clean(m.cfg.Dir)
	var lost *lostFolder // non-nil while the folder is gone
	for {
		var poll <-chan time.Time
		if lost != nil {
			poll = lost.poll.C
		}
		select {
		case <-ctx.Done():
			lost.stop()
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				lost.stop()
				return errors.New("plugins: the folder watcher stopped")
			}
			if lost != nil {
				// Only the parent is watched: its events about the
				// folder's name may be its return.
				switch {
				case filepath.Clean(ev.Name) == dir && ev.Has(fsnotify.Create|fsnotify.Rename):
					if m.rewatch(ctx, w, lost) {
						lost = nil
					}
				case ev.Name == lost.parent && ev.Has(fsnotify.Remove|fsnotify.Rename):
					lost.parent = "" // the parent went too: the ticker finds the folder back
				}
				continue
			}
			if !ev.Has(fsnotify.Create | fsnotify.Write | fsnotify.Rename | fsnotify.Remove) {
				continue // chmod alone changes nothing we load
			}
			if filepath.Clean(ev.Name) == dir {
				// The events of the files removed with it (rm -rf) are
				// not acted on: what is loaded keeps serving until the
				// folder is back.
				d.stopAll()
				lost = m.loseFolder(w)
				if m.rewatch(ctx, w, lost) { // back already
					lost = nil
				}
				continue
			}
			if name, ok := watchedName(filepath.Base(ev.Name)); ok {
				d.touch(name)
			}
		case <-poll:
			if m.rewatch(ctx, w, lost) {
				lost = nil
			}
		case err, ok := <-w.Errors:
			if !ok {
				lost.stop()
				return errors.New("plugins: the folder watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				if lost != nil {
					if m.rewatch(ctx, w, lost) {
						lost = nil
					}
					continue
				}
				m.log.Warn("plugins folder: events were lost; checking every file", "dir", m.cfg.Dir)
				d.rescan()
				continue
			}
			m.log.Error("watching the plugins folder", "dir", m.cfg.Dir, "err", err)
		case f := <-d.fire:
			if !d.due(f) {
				continue // an event came after this timer was set
			}
			syncs.Add(1)
			go func() {
				defer syncs.Done()
				// A failure is logged and kept in Status by the commit.
				_ = m.syncFile(ctx, f.name, syncChanged)
			}()
		}
	}
}

// rewatchPoll is how often Watch looks for a removed plugins folder to
// come back, besides the parent folder's events: a stat a second while
// the folder is gone.
const rewatchPoll = time.Second

// lostFolder is the state of Watch while the plugins folder is gone: the
// parent folder it watches for the folder's return ("" when it could not,
// or the parent went too), and the ticker it looks on.
type lostFolder struct {
	parent string
	poll   *time.Ticker
}

func (l *lostFolder) stop() {
	if l != nil {
		l.poll.Stop()
	}
}

// WatchErr returns why the running Watch does not follow the plugins
// folder now (the folder was removed or renamed and has not come back: hot
// reload is off, the plugins loaded keep serving), or nil. It is nil when
// no Watch runs.
func (m *Manager) WatchErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.watchErr
}

func (m *Manager) setWatchErr(err error) {
	m.mu.Lock()
	m.watchErr = err
	m.mu.Unlock()
}

// loseFolder records that the folder is gone and starts looking for its
// return: through the parent folder's events, or a ticker.
func (m *Manager) loseFolder(w *fsnotify.Watcher) *lostFolder {
	_ = w.Remove(m.cfg.Dir) // fsnotify may have dropped the watch already
	err := fmt.Errorf("the plugins folder %s was removed or renamed: hot reload is off until it is created again (the plugins loaded keep serving)", m.cfg.Dir)
	m.setWatchErr(err)
	l := &lostFolder{parent: filepath.Dir(filepath.Clean(m.cfg.Dir)), poll: time.NewTicker(rewatchPoll)}
	if aerr := w.Add(l.parent); aerr != nil {
		l.parent = ""
	}
	m.log.Error("plugins folder gone: hot reload is off until it is created again; the plugins loaded keep serving",
		"dir", m.cfg.Dir, "watching_parent", l.parent != "", "looking_every", rewatchPoll)
	return l
}

// rewatch watches the folder again if it is back, and then syncs with it
// as Watch does on start; it reports whether it did. A folder that is
// not (yet) a directory is not watched.
func (m *Manager) rewatch(ctx context.Context, w *fsnotify.Watcher, l *lostFolder) bool {
	if fi, err := os.Stat(m.cfg.Dir); err != nil || !fi.IsDir() {
		return false
	}
	if err := w.Add(m.cfg.Dir); err != nil {
		return false // gone again: its next return has an event of its own
	}
	if l.parent != "" {
		_ = w.Remove(l.parent)
	}
	l.stop()
	m.setWatchErr(nil)
	m.log.Warn("plugins folder back: watching it again and loading what it holds", "dir", m.cfg.Dir)
	m.loadAll(ctx) // failures are logged and kept in Status
	return true
}

// debouncer holds one timer per file name: every event restarts it, and
// the file is acted on when it fires. It is used by Watch's goroutine only
// (the timers' functions just send on fire).
type debouncer struct {
	m      *Manager
	ctx    context.Context
	fire   chan fired
	timers map[string]*pending
	gen    uint64 // unique per timer set, so that a stale firing is ignored
}

type pending struct {
	timer *time.Timer
	gen   uint64
}

type fired struct {
	name string
	gen  uint64
}

// touch (re)starts the quiet period of name.
func (d *debouncer) touch(name string) {
	if p, ok := d.timers[name]; ok {
		p.timer.Stop()
	}
	d.gen++
	f := fired{name: name, gen: d.gen}
	d.timers[name] = &pending{gen: d.gen, timer: time.AfterFunc(d.m.cfg.Debounce, func() {
		select {
		case d.fire <- f:
		case <-d.ctx.Done():
		}
	})}
}

// due reports whether f is the last timer set for its name, and forgets it.
// A timer that fired while an event for the same name was being handled
// is stale: the newer timer decides.
func (d *debouncer) due(f fired) bool {
	p, ok := d.timers[f.name]
	if !ok || p.gen != f.gen {
		return false
	}
	delete(d.timers, f.name)
	return true
}

// rescan treats every plugin file, and every plugin known, as changed.
func (d *debouncer) rescan() {
	names, err := d.m.scan()
	if err != nil {
		d.m.log.Error("scanning the plugins folder", "err", err)
	}
	for _, name := range d.m.withKnown(names) {
		d.touch(name)
	}
}

// watchedName returns the plugin a file name (base name) belongs to: the
// module NAME.wasm, its signature NAME.wasm.sig or the operator file
// NAME.json.
func watchedName(file string) (string, bool) {
	if name, ok := pluginName(file); ok {
		return name, true
	}
	if base, ok := strings.CutSuffix(file, SignatureExt); ok { // NAME.wasm.sig: a signature that came after its module
		return pluginName(base + ".wasm")
	}
	return operatorName(file)
}

// stopAll stops and forgets every timer: the files are not acted on.
func (d *debouncer) stopAll() {
	for name, p := range d.timers {
		p.timer.Stop()
		delete(d.timers, name)
	}
}
