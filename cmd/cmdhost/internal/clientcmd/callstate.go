package clientcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The state store of `cmdhost call` (docs/state.md): a call runs with one,
// as in a host, and its writes commit when it answers below 400. By
// default the store is the call's own and starts empty: a temporary
// folder, made only when the call commits a write and removed after it
// (a call that writes nothing opens no database). --state-dir DIR keeps
// the store in DIR between calls (a counter grows from one call to the
// next); --state-dir off runs without one (the guest's state calls answer
// unavailable).

func callStateFlag() cli.Flag {
	// No environment variable: serve's CMDHOST_STATE_DIR names a host's
	// store, which a call must not pick up unasked.
	return &cli.StringFlag{Name: "state-dir", Usage: "keep the handler's state store in `DIR` between calls (made if missing; a host's folder only while it is stopped); off: none (default: a store of the call's own, empty, removed after it)"}
}

// callStore is a call's state store: the Disk in dir, or, when tmp, one
// in a temporary folder made at the first commit (until then the store
// is empty, and reads need no database).
type callStore struct {
	dir string // the folder, or the temporary folder once made
	tmp bool

	mu   sync.Mutex
	disk *state.Disk
}

var _ state.Backend = (*callStore)(nil)

// openCallStore is the store --state-dir asks for: nil for off. A folder
// named is opened at once, so that one in use is refused before the call
// runs.
func openCallStore(c *cli.Context) (*callStore, error) {
	switch dir := c.String("state-dir"); dir {
	case base.StateDirOff:
		return nil, nil
	case "":
		return &callStore{tmp: true}, nil
	default:
		s := &callStore{dir: dir}
		if _, err := s.open(); err != nil {
			return nil, cli.Exit(fmt.Sprintf("--state-dir %s: %v", dir, err), base.ExitFailed)
		}
		return s, nil
	}
}

// open returns the Disk, opening it (in a new temporary folder when tmp)
// at the first use.
func (s *callStore) open() (*state.Disk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disk != nil {
		return s.disk, nil
	}
	if s.tmp {
		dir, err := os.MkdirTemp("", "cmdhost-call-state-")
		if err != nil {
			return nil, fmt.Errorf("%w: a temporary state folder: %w", state.ErrUnavailable, err)
		}
		s.dir = dir
	}
	d, err := state.OpenDisk(state.DiskConfig{Dir: s.dir})
	if err != nil {
		return nil, err
	}
	s.disk = d
	return d, nil
}

// opened returns the Disk when it is open, nil when the store is a
// temporary one not yet made: empty.
func (s *callStore) opened() (*state.Disk, error) {
	s.mu.Lock()
	d, empty := s.disk, s.tmp && s.disk == nil
	s.mu.Unlock()
	if d != nil || empty {
		return d, nil
	}
	return s.open()
}

func (s *callStore) Get(ctx context.Context, ns string, key []byte) (state.Item, error) {
	d, err := s.opened()
	if d == nil || err != nil {
		return state.Item{}, cmp.Or(err, state.ErrNotFound)
	}
	return d.Get(ctx, ns, key)
}

func (s *callStore) List(ctx context.Context, ns string, prefix, after []byte, limit int) ([][]byte, bool, error) {
	d, err := s.opened()
	if d == nil || err != nil {
		return nil, false, err
	}
	return d.List(ctx, ns, prefix, after, limit)
}

func (s *callStore) Commit(ctx context.Context, c *state.Commit) ([]state.Result, error) {
	d, err := s.open()
	if err != nil {
		return nil, err
	}
	return d.Commit(ctx, c)
}

func (s *callStore) Outcome(ctx context.Context, id state.OutcomeID) ([]byte, bool, error) {
	d, err := s.opened()
	if d == nil || err != nil {
		return nil, false, err
	}
	return d.Outcome(ctx, id)
}

func (s *callStore) Usage(ctx context.Context, ns string) (state.Usage, error) {
	d, err := s.opened()
	if d == nil || err != nil {
		return state.Usage{}, err
	}
	return d.Usage(ctx, ns)
}

// Close closes the Disk, and removes a temporary folder.
func (s *callStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.disk != nil {
		err = s.disk.Close()
		s.disk = nil
	}
	if s.tmp && s.dir != "" {
		err = errors.Join(err, os.RemoveAll(s.dir))
		s.dir = ""
	}
	return err
}
