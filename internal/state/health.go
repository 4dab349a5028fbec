package state

import (
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// health is what the store knows of its ability to write: the error of
// its last batch that failed to write, until one writes again.
type health struct {
	mu       sync.Mutex
	err      error     // the last write's error; nil: it wrote
	probed   time.Time // when Health last tried a write of its own
	probeErr error     // what Health answered then
}

// metaProbe is the key Health writes to find out whether the store can
// write again (the store's own numbers' range: no namespace sees it).
var metaProbe = []byte{tagMeta, 'p', 'r', 'o', 'b', 'e'}

// probeEvery bounds Health's writes of its own to one a second.
const probeEvery = time.Second

// wrote records what a batch's write returned.
func (h *health) wrote(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
	if err != nil { // what Health says until it probes
		h.probeErr = unavailable("a commit failed to write to the state folder", err)
	}
}

// Health reports whether the store can write: nil while its last write
// succeeded, an error wrapping ErrUnavailable once it is closed or after
// a batch failed to write (a full or failing disk). After such a failure
// Health tries a write of its own, synced, at most once a second, so
// that a store that can write again is healthy again without waiting
// for a call to commit.
func (d *Disk) Health() error {
	h := &d.stats.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return d.read(func(*pebble.DB) error { return nil }) // closed?
	}
	now := time.Now()
	if now.Sub(h.probed) < probeEvery {
		return h.probeErr
	}
	h.probed = now
	err := d.read(func(db *pebble.DB) error {
		if err := db.Set(metaProbe, []byte(now.UTC().Format(time.RFC3339Nano)), pebble.Sync); err != nil {
			return unavailable("writing to the state folder "+d.dir, err)
		}
		return nil
	})
	if err == nil {
		h.err, h.probeErr = nil, nil
		return nil
	}
	h.probeErr = fmt.Errorf("%w (a commit failed before: %v)", err, h.err)
	return h.probeErr
}
