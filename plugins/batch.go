package plugins

import (
	"context"
	"time"
)

// A LoadAll of many plugins publishes their first versions together, not
// one by one: publishing rebuilds the served table from every entry (the
// commands resolved, sorted, compared with the table before), so that a
// publish per plugin made a start with N plugins cost N² (measured: 7.8 s
// of CPU for 1,000 WAT plugins from a warm cache, 0.34 s for 100;
// BENCHMARKS.md, Cost as the plugins grow). A first load serves nothing
// before it is published, so holding it back changes no call in flight;
// a reload (a new version of a plugin serving) is published at once, its
// old version then drains. While a batch runs, the clash checks count its
// unpublished commands and topics as served, so the first file still
// keeps a contested command. The batch is published when the LoadAll
// ends, and on the way every batchPublishEvery (at a commit, or by
// publishWhileLoading when no commit comes: a slow load holds the commits
// of the files after it), and the OnChange callbacks are told at once,
// so that a long start serves what is ready: a host subscribes a
// plugin's commands within batchPublishEvery of its load, not after the
// last of a thousand.
const batchPublishEvery = 250 * time.Millisecond

// unpublished are the first loads a batch committed and has not yet
// published. Guarded by Manager.mu; publish empties it.
type unpublished struct {
	commands map[string]string // command → plugin
	topics   []servedTopic
	since    time.Time // of the oldest; zero when empty
}

func (u *unpublished) add(plugin string, v *version) {
	if u.commands == nil {
		u.commands = map[string]string{}
		u.since = time.Now()
	}
	for _, c := range v.p.Description().Commands {
		u.commands[c.Name] = plugin
	}
	for _, ct := range v.topics {
		u.topics = append(u.topics, servedTopic{plugin: plugin, commandTopic: ct})
	}
}

// commitBatched is commit within a LoadAll: a first load waits for the
// batch's publish (or the next one due, which it then makes).
func (m *Manager) commitBatched(ctx context.Context, e *entry, l load) (outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	res, err := m.commitLocked(ctx, e, l, true)
	if m.unpublished.commands != nil && time.Since(m.unpublished.since) >= batchPublishEvery {
		res.freed = m.publish() || res.freed
	}
	return res, err
}

// publishBatch publishes what the batch left unpublished, and reports
// whether that freed a command or a topic (publish).
func (m *Manager) publishBatch() (freed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unpublished.commands != nil {
		return m.publish()
	}
	return false
}

// publishWhileLoading publishes a LoadAll's batch every
// batchPublishEvery, and runs the OnChange callbacks when that (or a
// commit) changed what is served, until stop, which waits for the last
// round.
func (m *Manager) publishWhileLoading() (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(batchPublishEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if m.publishBatch() {
					m.retryClashed()
				}
				m.notify()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
