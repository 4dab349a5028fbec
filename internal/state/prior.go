package state

import (
	"encoding/binary"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The outcomes recorded before this process opened the store. A process's
// dedup store in memory holds every request it received itself, so it
// looks in the store only for a request a process before it may have
// answered: the first receipt here of any request. That is every request,
// on the receiving path, and most are new: a lookup of a missing key costs
// Pebble a read of every table that could hold it. So Open takes note of
// the outcomes it finds (a Bloom filter of their ids, and when the last of
// them may go), and MayHaveOutcome answers at once, in memory, for every
// request none of them can be: after the last keep-until, never again.

// OutcomeFilter is a Backend that can tell at once, in memory, that it
// holds no outcome of a request recorded before this process opened it
// (Disk, and the stores that keep their outcomes in one).
type OutcomeFilter interface {
	MayHaveOutcome(OutcomeID) bool
}

// priorOutcomes is what OpenDisk found.
type priorOutcomes struct {
	until  time.Time // the latest keep-until of them; zero: none
	filter bloomFilter
}

// notePriorOutcomes reads the outcome index ('y' keys: keep-until, hash).
func notePriorOutcomes(db *pebble.DB) (priorOutcomes, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagOutcomeEnd}, UpperBound: []byte{tagOutcomeEnd + 1}})
	if err != nil {
		return priorOutcomes{}, unavailable("reading the outcomes kept", err)
	}
	defer it.Close()
	var hashes [][32]byte
	var p priorOutcomes
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 41 {
			continue
		}
		var h [32]byte
		copy(h[:], k[9:])
		hashes = append(hashes, h)
		if t := time.Unix(0, int64(binary.BigEndian.Uint64(k[1:9]))); t.After(p.until) {
			p.until = t
		}
	}
	if err := it.Error(); err != nil {
		return priorOutcomes{}, unavailable("reading the outcomes kept", err)
	}
	p.filter = newBloomFilter(len(hashes))
	for _, h := range hashes {
		p.filter.add(h)
	}
	return p, nil
}

// MayHaveOutcome reports whether an outcome of id recorded before this
// process opened the store may be kept: false means surely not (an
// outcome this process recorded is not counted: its caller remembers
// those itself).
func (d *Disk) MayHaveOutcome(id OutcomeID) bool {
	p := &d.prior
	if p.until.IsZero() || !d.clock.Now().Before(p.until) {
		return false
	}
	return p.filter.mayContain(outcomeHash(id))
}

// bloomFilter is a Bloom filter of outcome hashes, which are uniformly
// random already: its probes are taken from the hash's bits (double
// hashing), about 10 bits and 7 probes a hash, 1% false positives.
type bloomFilter struct{ bits []uint64 }

const bloomProbes = 7

func newBloomFilter(n int) bloomFilter {
	words := max(1, (n*10+63)/64)
	return bloomFilter{bits: make([]uint64, words)}
}

func (f bloomFilter) probes(h [32]byte, each func(bit uint64)) {
	a, b := binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])|1
	m := uint64(len(f.bits)) * 64
	for i := uint64(0); i < bloomProbes; i++ {
		each((a + i*b) % m)
	}
}

func (f bloomFilter) add(h [32]byte) {
	f.probes(h, func(bit uint64) { f.bits[bit/64] |= 1 << (bit % 64) })
}

func (f bloomFilter) mayContain(h [32]byte) bool {
	if len(f.bits) == 0 {
		return false
	}
	all := true
	f.probes(h, func(bit uint64) { all = all && f.bits[bit/64]&(1<<(bit%64)) != 0 })
	return all
}
