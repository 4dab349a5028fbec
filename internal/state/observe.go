package state

import "sync"

// Change is one key written or removed by a commit or a sweep, told to
// the observers once it is durable.
type Change struct {
	NS      string
	Key     []byte
	Value   []byte // a set's value; nil for a removal
	Deleted bool
	Expired bool   // removed because it expired
	Version uint64 // the version the change took
}

// observers are the functions told of every change, in commit order.
type observers struct {
	mu   sync.RWMutex
	next int
	fns  map[int]func([]Change)
}

// Observe calls f with the changes of each commit and sweep, in order,
// once they are durable, until the returned stop is called. f runs on the
// store's writer: it must not block or call the store (queue the work).
func (d *Disk) Observe(f func([]Change)) (stop func()) {
	o := &d.observers
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fns == nil {
		o.fns = map[int]func([]Change){}
	}
	id := o.next
	o.next++
	o.fns[id] = f
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.fns, id)
	}
}

func (o *observers) notify(changes []Change) {
	if len(changes) == 0 {
		return
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, f := range o.fns {
		f(changes)
	}
}
