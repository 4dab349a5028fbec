package plugins

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch follows the plugins folder until ctx is done or Close is called,
// then returns nil once the loads it started have stopped; it returns an
// error when the folder cannot be watched, or is removed or renamed (the
// plugins then keep being served). A create, write, rename or remove of a
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
		m.watching = false
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
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("plugins: the folder watcher stopped")
			}
			if !ev.Has(fsnotify.Create | fsnotify.Write | fsnotify.Rename | fsnotify.Remove) {
				continue // chmod alone changes nothing we load
			}
			if filepath.Clean(ev.Name) == filepath.Clean(m.cfg.Dir) {
				// The plugins keep being served; the host decides.
				return fmt.Errorf("plugins: the plugins folder %s was removed or renamed: no longer watching it", m.cfg.Dir)
			}
			if name, ok := watchedName(filepath.Base(ev.Name)); ok {
				d.touch(name)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("plugins: the folder watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
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
// module NAME.wasm or the operator file NAME.json.
func watchedName(file string) (string, bool) {
	if name, ok := pluginName(file); ok {
		return name, true
	}
	return operatorName(file)
}

func (d *debouncer) stopAll() {
	for _, p := range d.timers {
		p.timer.Stop()
	}
}
