package broker

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// Files the broker re-reads without a restart when they change: the ACL
// file, and the TLS listener's certificate, key and client CA (the users
// file and the token keys are re-read at each login instead: passwd,
// sat.go). The folders of the files are watched, not the files: a file is
// best replaced by a rename (as kubelet and cert-manager do; an editor
// that writes in place may be read half-written, which is refused and
// read again at its next write). A version that does not read or parse
// keeps the one in use, and the log says why: a broken edit locks no one
// out and lets no one in.

// fileWatch watches the folders of the files it was given and calls
// onChange with the paths that one event changed, on one goroutine, until
// Close.
type fileWatch struct {
	w    *fsnotify.Watcher
	done chan struct{}
}

// watchFiles starts a watch of files (paths; "" ignored) calling
// onChange; nil (a watch of nothing) when there are none.
func watchFiles(files []string, onChange func(paths []string), log *slog.Logger) (*fileWatch, error) {
	if !slices.ContainsFunc(files, func(f string) bool { return f != "" }) {
		return nil, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("broker: watching files: %w", err)
	}
	watched := map[string][]string{} // folder → the files in it
	for _, f := range files {
		if f == "" {
			continue
		}
		f = filepath.Clean(f)
		dir := filepath.Dir(f)
		if _, ok := watched[dir]; !ok {
			if err := w.Add(dir); err != nil {
				_ = w.Close()
				return nil, fmt.Errorf("broker: watching %s: %w", dir, err)
			}
		}
		watched[dir] = append(watched[dir], f)
	}
	fw := &fileWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(fw.done)
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				dir, base := filepath.Split(filepath.Clean(ev.Name))
				var changed []string
				for _, f := range watched[filepath.Clean(dir)] {
					// A ..data link swapped (a Kubernetes volume) changes every file of the folder;
					// the atomic writer's other steps (..<timestamp>, ..data_tmp) change none.
					if f == filepath.Clean(ev.Name) || base == "..data" {
						changed = append(changed, f)
					}
				}
				if len(changed) > 0 {
					onChange(changed)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("embedded broker: watching its files", "err", err)
			}
		}
	}()
	return fw, nil
}

// Close stops the watch and waits for its goroutine.
func (fw *fileWatch) Close() {
	if fw == nil {
		return
	}
	_ = fw.w.Close()
	<-fw.done
}

// reloadable are what the broker re-reads when a file changes.
type reloadable struct {
	cfg *Config
	log *slog.Logger
	acl *ACL                       // nil: no ACL file
	tls atomic.Pointer[tls.Config] // the TLS listener's; nil without one
}

// changed re-reads what the paths that changed (one event's) are: the
// ACL, and the TLS listener's files once for all of them.
func (r *reloadable) changed(paths []string) {
	tlsFile := ""
	for _, path := range paths {
		if r.acl == nil || path != filepath.Clean(r.acl.Path()) {
			tlsFile = path
			continue
		}
		if err := r.acl.Reload(); err != nil {
			r.log.Error("embedded broker: the ACL file changed and is not valid: the grants last read stay in force", "err", err)
		} else {
			r.log.Info("embedded broker: the ACL file changed: read again", "file", path)
		}
	}
	if tlsFile == "" || r.tls.Load() == nil {
		return
	}
	tc, err := tlsConfig(r.cfg)
	if err != nil {
		r.log.Error("embedded broker: a file of the TLS listener changed and is not valid: the certificate and client CA last read stay in use", "file", tlsFile, "err", err)
		return
	}
	r.tls.Store(tc)
	r.log.Info("embedded broker: a file of the TLS listener changed: read again", "file", tlsFile)
}

// files are the files r re-reads.
func (r *reloadable) files() []string {
	var fs []string
	if r.acl != nil {
		fs = append(fs, r.acl.Path())
	}
	if r.tls.Load() != nil {
		fs = append(fs, r.cfg.TLSCertFile, r.cfg.TLSKeyFile, r.cfg.TLSClientCAFile)
	}
	return fs
}

// listenerTLS is the TLS listener's configuration: each handshake takes
// the one last read.
func (r *reloadable) listenerTLS() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return r.tls.Load(), nil
	}}
}
