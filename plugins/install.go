package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// PreviousDir is the folder, inside the plugins folder, where Install
// keeps each plugin's previous module, PreviousDir/NAME.wasm, one per
// plugin, for Rollback. A dotfolder: the manager never serves from it.
//
// The previous module it replaces moves to PreviousDir/.older/NAME.wasm,
// one per plugin too, so that Reject, which drops the version serving,
// can keep that one as the previous again: a rollout's rejected version
// is never what a later Rollback serves.
const PreviousDir = ".previous"

// olderDir is the folder, inside PreviousDir, of the versions kept before
// the previous ones.
const olderDir = ".older"

// Installed is what Install served.
type Installed struct {
	Name     string
	Digest   string   // hex sha256 of the module now serving
	Commands []string // the commands it serves
	// Previous is the hex sha256 of the module kept for Rollback (the one
	// serving before); "" when none is kept.
	Previous string
}

// RefusedError is a module Install (or Rollback) did not serve: the
// version serving before, if any, keeps serving and the folder is as it
// was. Reason is the host's, as `plugin list` shows it.
type RefusedError struct {
	Plugin string
	Digest string // hex sha256 of the module refused
	err    error
}

func (e *RefusedError) Error() string { return e.err.Error() }
func (e *RefusedError) Unwrap() error { return e.err }

// Install serves the module bin as plugin name and writes it into the
// folder as NAME.wasm, with sig, its signature file's content (nil: none),
// as NAME.wasm.sig, in place of the version serving if any, which it
// keeps as the plugin's previous version (PreviousDir) for Rollback. It
// returns once the new version serves, or refuses it (a *RefusedError):
// a module that does not load, that the operator file NAME.json does not
// fit, disables or pins another digest of, that is not signed by a key
// the manager trusts (Config.Trust), or whose commands or topics another plugin serves (a
// *ClashError inside) is not written, and the version serving goes on.
// The module is written to a temporary dotfile in the folder and renamed
// into place after it is served, so that the file and the served version
// agree and a watcher never sees half a file.
func (m *Manager) Install(ctx context.Context, name string, bin, sig []byte) (Installed, error) {
	return m.onEntry(ctx, name, func(e *entry) (Installed, outcome, error) {
		return m.install(ctx, e, bin, sig, true)
	})
}

// onEntry runs f with the lock of plugin name's entry held, then settles
// its outcome and calls the OnChange callbacks.
func (m *Manager) onEntry(ctx context.Context, name string, f func(e *entry) (Installed, outcome, error)) (Installed, error) {
	if err := checkName(name); err != nil {
		return Installed{}, err
	}
	if err := m.begin(); err != nil {
		return Installed{}, err
	}
	defer m.ops.Done()
	e := m.entryFor(name)
	if err := e.acquire(ctx); err != nil {
		return Installed{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	in, res, err := f(e)
	e.release()
	m.settle(res)
	m.notify()
	return in, err
}

// install is Install with e's lock held; keep false does not keep the
// version it replaces as the previous one (Reject).
func (m *Manager) install(ctx context.Context, e *entry, bin, sig []byte, keep bool) (Installed, outcome, error) {
	l := load{path: m.path(e.name), opPath: m.opPath(e.name), digest: sha(bin)}
	if len(m.cfg.Trust) > 0 && sig != nil {
		l.sig, l.sigDigest = sig, sha(sig)
	}
	in := Installed{Name: e.name, Digest: l.digest}
	refused := func(err error) error { return &RefusedError{Plugin: e.name, Digest: l.digest, err: err} }
	opErr, err := l.readOperator()
	switch {
	case err != nil:
		return in, outcome{}, refused(fmt.Errorf("plugin %s: operator file: %w", e.name, err))
	case l.off:
		return in, outcome{}, refused(fmt.Errorf("plugin %s is disabled by %s (\"enabled\": false): it would not be served; set \"enabled\": true there, or remove that file", e.name, l.opPath))
	case opErr != nil:
		l.op, l.err = nil, fmt.Errorf("plugin %s: %w", e.name, opErr)
	default:
		if l.err = m.checkOrigin(e.name, l.digest, l.op, sig); l.err != nil {
			break
		}
		m.mu.Lock()
		e.loading = e.cur == nil
		m.mu.Unlock()
		start := time.Now()
		l.p, l.topics, l.err = m.loadVersion(ctx, e.name, bin, l.op)
		l.took = time.Since(start)
	}
	// What serves now, to keep as the previous version: the file's
	// content when it is what serves (a file refused since is not).
	m.mu.Lock()
	var serving string
	if e.cur != nil {
		serving = e.cur.digest
	}
	m.mu.Unlock()
	var old, oldSig []byte
	if keep && l.err == nil && serving != "" && serving != l.digest { // kept for a rollback: not read for a refused install
		if b, err := wasm.ReadModule(l.path, m.cfg.Plugin.MaxModuleBytes); err == nil && sha(b) == serving {
			old = b
			oldSig, _ = readSignature(m.sigPath(e.name))
		}
	}
	var tmp string
	if l.err == nil {
		if tmp, err = writeTemp(m.cfg.Dir, "."+e.name+".*.tmp", bin); err != nil {
			_ = l.p.Close(context.Background()) // never served
			m.mu.Lock()
			e.loading = false
			m.mu.Unlock()
			return in, outcome{}, fmt.Errorf("plugin %s: writing the module into the plugins folder: %w", e.name, err)
		}
		defer os.Remove(tmp) // gone once renamed
	}
	res, err := m.commit(ctx, e, l)
	if err != nil {
		if ctx.Err() != nil {
			return in, res, err
		}
		return in, res, refused(err)
	}
	in.Commands = commandNames(l.p)
	if old != nil {
		if err := m.keepPrevious(e.name, old, oldSig); err != nil {
			m.log.Warn("plugin installed, but its previous version could not be kept for a rollback", "plugin", e.name, "err", err)
		} else {
			in.Previous = serving
		}
	} else if prev, err := m.Previous(e.name); err == nil && keep {
		in.Previous = prev
	}
	// The signature goes first, so that a watcher seeing the new module
	// finds its signature beside it; when the module cannot follow, the
	// file keeps the signature of the module it still holds.
	onDisk, onDiskErr := readSignature(m.sigPath(e.name))
	err = m.placeSignature(m.cfg.Dir, m.sigPath(e.name), sig)
	if err == nil {
		if err = os.Rename(tmp, l.path); err != nil && onDiskErr == nil {
			_ = m.placeSignature(m.cfg.Dir, m.sigPath(e.name), onDisk)
		}
	}
	if err != nil {
		// Served for now; the file still holds the old content, which the
		// next look at the folder (a watcher's, at once) or a restart serves.
		return in, res, fmt.Errorf("plugin %s: its new version could not be written to its file, which still holds the old one: the host serves the new version only until it next reads its folder (at once with a watcher, or at a restart): %w", e.name, err)
	}
	return in, res, nil
}

// Rollback serves again the plugin's previous version, the one Install
// kept when it installed the version serving, and keeps that one as the
// previous in turn (a second Rollback undoes the first). It refuses as
// Install does; with no previous version kept it is an error that says so.
func (m *Manager) Rollback(ctx context.Context, name string) (Installed, error) {
	if err := checkName(name); err != nil {
		return Installed{}, err
	}
	bin, sig, err := m.readPrevious(name)
	if err != nil {
		return Installed{}, err
	}
	return m.Install(ctx, name, bin, sig)
}

// Reject serves again the plugin's previous version, as Rollback does,
// and drops the version serving, which was found bad (a rollout's
// automatic rollback): it is not kept, and the version kept before the
// previous one becomes the previous again (none: none is kept). So a
// later Rollback, on this host as on a host the rollout never reached,
// serves the version from before the rejected install, never the
// rejected one.
func (m *Manager) Reject(ctx context.Context, name string) (Installed, error) {
	return m.onEntry(ctx, name, func(e *entry) (Installed, outcome, error) {
		bin, sig, err := m.readPrevious(name)
		if err != nil {
			return Installed{}, outcome{}, err
		}
		in, res, err := m.install(ctx, e, bin, sig, false)
		if err == nil {
			if in.Previous, err = m.restoreOlder(name); err != nil {
				// Served; the previous slot holds the version serving, so a
				// Rollback would change nothing.
				m.log.Warn("plugin rolled back, but the version before its previous one could not be kept for a rollback", "plugin", name, "err", err)
				in.Previous, err = in.Digest, nil
			}
		}
		return in, res, err
	})
}

// readPrevious reads the plugin's previous version and its signature
// (nil: none).
func (m *Manager) readPrevious(name string) (bin, sig []byte, err error) {
	bin, err = wasm.ReadModule(m.previousPath(name), m.cfg.Plugin.MaxModuleBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("plugin %s has no previous version to roll back to: one is kept when an install replaces a version (cmdhost plugin install)", name)
	}
	if err == nil {
		sig, err = readSignature(m.previousPath(name) + signing.Ext)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: its previous version: %w", name, err)
	}
	return bin, sig, nil
}

// Previous returns the hex sha256 of the plugin's previous version kept
// for Rollback, or an error wrapping fs.ErrNotExist when none is kept.
func (m *Manager) Previous(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	b, err := wasm.ReadModule(m.previousPath(name), m.cfg.Plugin.MaxModuleBytes)
	if err != nil {
		return "", err
	}
	return sha(b), nil
}

func (m *Manager) previousPath(name string) string {
	return filepath.Join(m.cfg.Dir, PreviousDir, name+".wasm")
}

// olderPath is where the version kept before the previous one is.
func (m *Manager) olderPath(name string) string {
	return filepath.Join(m.cfg.Dir, PreviousDir, olderDir, name+".wasm")
}

// keepPrevious writes bin as the plugin's previous version, and sig as
// its signature (nil: none); the one kept before moves to olderPath (one
// of each per plugin: the folder's size stays bounded).
func (m *Manager) keepPrevious(name string, bin, sig []byte) error {
	dir := filepath.Join(m.cfg.Dir, PreviousDir)
	if err := os.MkdirAll(filepath.Join(dir, olderDir), 0o755); err != nil {
		return err
	}
	if err := moveKept(m.previousPath(name), m.olderPath(name)); err != nil {
		return err
	}
	if err := m.placeSignature(dir, m.previousPath(name)+signing.Ext, sig); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, "."+name+".*.tmp", bin)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, m.previousPath(name)); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// restoreOlder makes the version kept before the previous one the
// previous again, and returns its hex sha256; with none kept, no previous
// version is kept ("").
func (m *Manager) restoreOlder(name string) (string, error) {
	if err := moveKept(m.olderPath(name), m.previousPath(name)); err != nil {
		return "", err
	}
	prev, err := m.Previous(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return prev, err
}

// moveKept moves the kept module at from, and its signature file, to to;
// with no module at from, what is at to goes (module and signature).
func moveKept(from, to string) error {
	for _, ext := range []string{signing.Ext, ""} { // the signature first: a module is never beside another's
		err := os.Rename(from+ext, to+ext)
		if errors.Is(err, fs.ErrNotExist) {
			err = os.Remove(to + ext)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeTemp writes bin to a new temporary file in dir named after
// pattern (os.CreateTemp), readable by whoever may read dir (0644 masked
// by dir's permissions, as `cmdhost plugin install` writes), and returns
// its path.
func writeTemp(dir, pattern string, bin []byte) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(bin)
	if err == nil {
		err = f.Chmod(0o644 & st.Mode().Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
