// Package hlc is the hybrid logical clock (HLC) of the `__ts` user
// property, which the executor and the invoker share.
//
// Every publish the host sends carries `__ts`, and every `__ts` the host
// receives is merged into its clock: there is one HLC per application,
// updated on every inbound publish and advanced against the system clock
// before every outbound publish. The HLC gives messages an order that respects
// causality (a response is always stamped later than the request it answers,
// even when the two machines' clocks disagree) while staying close to wall
// time, so values remain meaningful to people and usable as fencing tokens.
//
// The algorithm is the one of Kulkarni et al., "Logical Physical Clocks and
// Consistent Snapshots in Globally Distributed Databases" (2014), which is
// what the AIO SDKs implement:
//
//	send / local event:  l' = max(l, pt); c' = (l' == l) ? c+1 : 0
//	receive event (m):   l' = max(l, m.l, pt)
//	                     c' = max(c, m.c)+1  if l' == l == m.l
//	                          c+1            if l' == l only
//	                          m.c+1          if l' == m.l only
//	                          0              if l' == pt only
//
// where l is wall time in milliseconds, c the counter and pt the physical
// clock truncated to milliseconds.
//
// Decisions the RPC protocol leaves open, and why:
//
//   - Counter bound. The protocol says nothing about the counter's width
//     (an unparsable `__ts` gives 400, nothing more).
//     The AIO Go SDK keeps a uint64 and only detects wrap-around; other HLC
//     libraries use uint16 (65535). We bound the counter by the wire format
//     instead: `%05d` gives five digits, so the largest counter that can be
//     sent, and that our strict parser accepts back, is 99999
//     (MaxCounter). Bounding by uint16 would reject valid
//     five-digit values from peers; bounding by uint64 would let us emit
//     six-digit counters that strict peers (and we) reject as malformed.
//   - Counter carry. When the counter would pass 99999 it carries into the
//     milliseconds: (l, 99999) is followed by (l+1, 0), which orders after
//     it, so the clock never overflows. Failing instead (the protocol's
//     "HLC integer overflow" error, 500) would let one request poison the
//     clock: a `__ts` 50 s ahead with counter 99998 is within the drift limit, and
//     while physical time has not caught up with it every later event would
//     continue that counter and fail, for every invoker, for 50 s, renewable
//     by sending it again. Nor does it take a hostile peer: while a merge
//     from a fast peer holds the clock ahead of physical time, every event
//     increments the counter, and 100,000 events before physical time
//     catches up (2,000 a second for 50 s) would overflow it.
//   - Drift rule. A remote timestamp whose milliseconds are more than
//     MaxDrift (default 1 minute, the AIO default) ahead of the physical
//     clock is refused with ErrClockDrift, the protocol's "HLC excessive
//     clock drift" error (503, `__propName` "MaxClockDrift"), before it
//     touches the clock. The rule is judged on the remote's own value, never on the
//     merged one, so milliseconds gained by a carry never count against it:
//     no sequence of remotes within the limit makes a later remote within
//     the limit fail. What the clock takes from physical readings and
//     accepted remotes (its base) is therefore at most MaxDrift ahead. Each
//     carry adds a millisecond: the first may come at once (a remote at the
//     limit with counter 99999), each further one takes 100,000 events in
//     the same millisecond. So while fewer than 100,000 events share a
//     millisecond of physical time (10^8 a second, far beyond any MQTT
//     rate) the clock is at most MaxDrift + 1 ms ahead of physical time.
//     Its own base too far ahead means the physical clock stepped back by
//     more than MaxDrift (a fault of this host, not of a peer): then Now
//     and Update fail with ErrClockDrift until physical time has caught
//     up. On any error the clock is left unchanged: one bad peer must not
//     poison the clock for every other request.
//   - Node id. The format is three ':'-separated fields and the AIO SDKs split
//     on ':' and require exactly three parts, so a node id containing ':'
//     cannot round-trip. Parse rejects it, and New refuses such a
//     node id rather than emit timestamps nobody can parse.
//   - A remote timestamp carrying our own node id is merged like any other
//     (merging a value we produced is harmless: it can never be ahead of us).
package hlc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/internal/clock"
)

const (
	// MaxCounter is the largest counter a Timestamp can carry: the
	// counter field is five decimal digits on the wire ("%05d").
	MaxCounter = 99999

	// DefaultMaxDrift is how far the HLC may run ahead of the physical
	// clock when Config.MaxDrift is not set; it is the AIO SDKs' default.
	DefaultMaxDrift = time.Minute

	hlcMillisDigits  = 15
	hlcCounterDigits = 5
)

var (
	// ErrClockDrift reports a remote timestamp further ahead of the
	// physical clock than the configured maximum drift, or the HLC's own
	// base that far ahead (the physical clock stepped back). The executor
	// answers 503 with __propName "MaxClockDrift".
	ErrClockDrift = errors.New("hlc: clock drift exceeds the maximum")

	// ErrCounterOverflow reports a remote timestamp whose counter exceeds
	// MaxCounter, which no parsed `__ts` carries. The clock's own
	// counter never overflows: it carries into the milliseconds. The
	// executor answers 500 with __propName "Counter".
	ErrCounterOverflow = errors.New("hlc: counter overflow")

	// ErrMalformed is wrapped by every Parse error, so the
	// executor can tell a bad `__ts` (400, __propName "__ts") from other
	// failures with errors.Is.
	ErrMalformed = errors.New("hlc: malformed timestamp")
)

// Timestamp is a hybrid logical clock value: wall time in milliseconds, a counter and a node id.
//
// On the wire it is "%015d:%05d:<nodeId>" (unix milliseconds, counter, node
// id). Only values with 0 <= Millis <= 999999999999999, Counter <=
// MaxCounter and a non-empty NodeID without ':' survive a round trip
// through String and Parse; an HLC only ever produces such values
// (for any physical time after 1970).
type Timestamp struct {
	Millis  int64
	Counter uint32
	NodeID  string
}

// Parse parses the wire form "%015d:%05d:<nodeId>".
//
// It is strict, because a `__ts` we cannot read exactly must be answered with
// 400 rather than merged approximately: exactly three ':'-separated fields,
// exactly 15 ASCII digits of milliseconds, exactly 5 ASCII digits of counter
// (no signs, spaces or other widths) and a non-empty node id. The error says
// which rule was broken and wraps ErrMalformed.
func Parse(s string) (Timestamp, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Timestamp{}, hlcParseError(s, "want three fields <millis>:<counter>:<nodeId> separated by ':', got %d (a node id may not contain ':')", len(parts))
	}
	millis, err := hlcDigits(parts[0], hlcMillisDigits)
	if err != nil {
		return Timestamp{}, hlcParseError(s, "milliseconds field %q: %v", parts[0], err)
	}
	counter, err := hlcDigits(parts[1], hlcCounterDigits)
	if err != nil {
		return Timestamp{}, hlcParseError(s, "counter field %q: %v", parts[1], err)
	}
	if parts[2] == "" {
		return Timestamp{}, hlcParseError(s, "node id is empty")
	}
	return Timestamp{Millis: millis, Counter: uint32(counter), NodeID: parts[2]}, nil
}

// hlcDigits parses exactly width ASCII decimal digits. strconv.ParseInt is
// not used because it accepts a leading '+' or '-', which the fixed-width
// format does not allow.
func hlcDigits(field string, width int) (int64, error) {
	if len(field) != width {
		return 0, fmt.Errorf("want exactly %d digits, got %d characters", width, len(field))
	}
	var v int64
	for i := 0; i < len(field); i++ {
		b := field[i]
		if b < '0' || b > '9' {
			return 0, fmt.Errorf("want exactly %d digits, found non-digit %q at offset %d", width, b, i)
		}
		v = v*10 + int64(b-'0') // at most 15 digits: cannot overflow int64
	}
	return v, nil
}

func hlcParseError(s, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrMalformed, s, fmt.Sprintf(format, args...))
}

// String formats t as "%015d:%05d:<nodeId>", the `__ts` wire form.
func (t Timestamp) String() string {
	return fmt.Sprintf("%015d:%05d:%s", t.Millis, t.Counter, t.NodeID)
}

// Compare orders timestamps by Millis, then Counter, then NodeID, returning
// -1, 0 or +1. Ordering by NodeID last makes it a total order, so timestamps
// from different nodes that tie on time and counter still sort consistently
// everywhere (useful for fencing tokens and last-writer-wins).
func (t Timestamp) Compare(u Timestamp) int {
	switch {
	case t.Millis < u.Millis:
		return -1
	case t.Millis > u.Millis:
		return 1
	case t.Counter < u.Counter:
		return -1
	case t.Counter > u.Counter:
		return 1
	default:
		return strings.Compare(t.NodeID, u.NodeID)
	}
}

// Config configures a Clock.
type Config struct {
	// NodeID identifies this clock in every timestamp it issues (the host
	// uses its MQTT client id). Required; must not contain ':'.
	NodeID string
	// Clock is the physical clock; nil means the system clock. Tests
	// inject a fake one (testkit.Clock).
	Clock clock.Clock
	// MaxDrift is how far the HLC may run ahead of the physical clock; zero
	// or negative means DefaultMaxDrift (1 minute).
	MaxDrift time.Duration
}

// withDefaults resolves the zero fields (package setting's rule).
func (c Config) withDefaults() Config {
	c.Clock = clock.OrSystem(c.Clock)
	if c.MaxDrift <= 0 {
		c.MaxDrift = DefaultMaxDrift
	}
	return c
}

// Clock is a hybrid logical clock, safe for concurrent use. There should be one
// per application, shared by everything that publishes or receives, so that
// every message the application sends is ordered after every message it has
// seen.
type Clock struct {
	now        func() time.Time
	maxDriftMs int64 // drift in whole ms: drift (an integer number of ms) > MaxDrift  <=>  drift > floor(MaxDrift/ms)
	mu         sync.Mutex
	ts         Timestamp
	// base is the largest millisecond value taken from a physical reading or
	// an accepted remote; ts.Millis - base is what counter carries added.
	// The drift rule is checked on base, so carries never count as drift.
	base int64
}

// New returns a clock starting at the physical time, counter 0.
//
// It panics if cfg.NodeID is empty or contains ':': such a clock would stamp
// every message with a `__ts` that peers (and Parse) reject, which is
// a configuration bug better caught at start-up than on the wire.
func New(cfg Config) *Clock {
	if cfg.NodeID == "" {
		panic("hlc.New: empty NodeID")
	}
	if strings.Contains(cfg.NodeID, ":") {
		panic(fmt.Sprintf("hlc.New: NodeID %q contains ':', which the __ts format cannot carry", cfg.NodeID))
	}
	cfg = cfg.withDefaults()
	h := &Clock{now: cfg.Clock.Now, maxDriftMs: cfg.MaxDrift.Milliseconds()}
	h.base = h.physicalMillis()
	h.ts = Timestamp{Millis: h.base, NodeID: cfg.NodeID}
	return h
}

func (h *Clock) physicalMillis() int64 { return h.now().UnixMilli() }

// Now performs the HLC send/local event and returns the new value (zero on error), to be put
// on an outbound publish as `__ts`.
//
// Wall time moves to max(own, physical now); when it did not advance (the
// physical clock stood still or went backwards) the counter is incremented
// (carrying into the milliseconds past MaxCounter) so every value
// is strictly greater than the previous one, otherwise it resets to 0. The
// only error is ErrClockDrift, when the clock's base is ahead of physical
// time by more than MaxDrift (the physical clock stepped back); it leaves
// the clock unchanged.
func (h *Clock) Now() (Timestamp, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := h.physicalMillis()
	if err := h.checkBase(pt); err != nil {
		return Timestamp{}, err
	}
	next := Timestamp{Millis: h.ts.Millis, NodeID: h.ts.NodeID}
	var c uint64
	if pt > next.Millis {
		next.Millis = pt
	} else {
		c = uint64(h.ts.Counter) + 1
	}
	h.set(next, c, pt)
	return h.ts, nil
}

// Update performs the HLC receive event, merging remote (an inbound `__ts`)
// into the clock so that everything stamped afterwards orders after it.
//
// Wall time moves to max(own, remote, physical now); the counter continues
// from whichever of own and remote supplied that wall time (the larger of
// both, plus one, on a tie), carrying into the milliseconds past
// MaxCounter, and resets to 0 when physical time is strictly
// ahead of both. Errors leave the clock unchanged: ErrClockDrift when
// remote is ahead of physical time by more than MaxDrift, or the clock's
// own base is (the physical clock stepped back); ErrCounterOverflow when
// remote.Counter exceeds MaxCounter. remote.NodeID is not used.
func (h *Clock) Update(remote Timestamp) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := h.physicalMillis()
	// Drift first: when a value is both too far ahead and out of range,
	// the drift is the cause worth reporting.
	if remote.Millis-pt > h.maxDriftMs {
		return ErrClockDrift
	}
	if err := h.checkBase(pt); err != nil {
		return err
	}
	if remote.Counter > MaxCounter {
		return ErrCounterOverflow
	}
	own := h.ts
	next := Timestamp{Millis: max(own.Millis, remote.Millis, pt), NodeID: own.NodeID}
	var c uint64
	switch {
	case next.Millis == own.Millis && next.Millis == remote.Millis:
		c = uint64(max(own.Counter, remote.Counter)) + 1
	case next.Millis == own.Millis:
		c = uint64(own.Counter) + 1
	case next.Millis == remote.Millis:
		c = uint64(remote.Counter) + 1
	default: // physical time is strictly ahead of both
		c = 0
	}
	h.base = max(h.base, remote.Millis)
	h.set(next, c, pt)
	return nil
}

// checkBase refuses to advance a clock whose base is more than MaxDrift
// ahead of physical time pt. Called with h.mu held.
func (h *Clock) checkBase(pt int64) error {
	if h.base-pt > h.maxDriftMs {
		return ErrClockDrift
	}
	return nil
}

// set makes next, with counter c (widened so that an increment never
// wraps), the clock's value: a counter past MaxCounter carries
// into the milliseconds. Called with h.mu held.
func (h *Clock) set(next Timestamp, c uint64, pt int64) {
	if c > MaxCounter {
		next.Millis++
		c = 0
	}
	next.Counter = uint32(c)
	h.ts = next
	h.base = max(h.base, pt)
}

// Current returns the clock's value without advancing it (for reading, e.g.
// ordering or fencing; use Now to stamp a message).
func (h *Clock) Current() Timestamp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts
}
