package rpc

// Hybrid logical clock (HLC) for the `__ts` user property.
//
// Every publish the host sends carries `__ts`, and every `__ts` the host
// receives is merged into its clock (AIO ADR-0007: one HLC per application,
// updated on every inbound publish, advanced against the system clock before
// every outbound publish). The HLC gives messages an order that respects
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
// Decisions the ADR leaves open, and why:
//
//   - Counter bound. ADR-0007 and the conformance cases say nothing about the
//     counter's width (they only check that an unparsable `__ts` gives 400).
//     The AIO Go SDK keeps a uint64 and only detects wrap-around; other HLC
//     libraries use uint16 (65535). We bound the counter by the wire format
//     instead: `%05d` gives five digits, so the largest counter that can be
//     sent, and that our strict parser accepts back, is 99999
//     (MaxTimestampCounter). Going past it is ErrCounterOverflow, the error
//     table's "HLC integer overflow" (500, `__propName` "Counter"). Bounding by
//     uint16 would reject valid five-digit values from peers; bounding by
//     uint64 would let us emit six-digit counters that strict peers (and we)
//     reject as malformed.
//   - Node id. The format is three ':'-separated fields and the AIO SDKs split
//     on ':' and require exactly three parts, so a node id containing ':'
//     cannot round-trip. ParseTimestamp rejects it, and NewHLC refuses such a
//     node id rather than emit timestamps nobody can parse.
//   - Drift. A clock that runs ahead of physical time by more than MaxDrift
//     (default 1 minute, the AIO default) is refused with ErrClockDrift, the
//     error table's "HLC excessive clock drift" (503, `__propName`
//     "MaxClockDrift"). The check is on the value the clock would move to, so
//     it covers both a remote timestamp far in the future (Update) and our own
//     clock being far ahead because the physical clock stepped back (Now, and
//     Update too). On any error the clock is left unchanged: one bad peer must
//     not poison the clock for every other request.
//   - A remote timestamp carrying our own node id is merged like any other
//     (merging a value we produced is harmless: it can never be ahead of us).

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

const (
	// MaxTimestampCounter is the largest counter a Timestamp can carry: the
	// counter field is five decimal digits on the wire ("%05d").
	MaxTimestampCounter = 99999

	// DefaultMaxClockDrift is how far the HLC may run ahead of the physical
	// clock when HLCConfig.MaxDrift is not set; it is the AIO SDKs' default.
	DefaultMaxClockDrift = time.Minute

	hlcMillisDigits  = 15
	hlcCounterDigits = 5
)

var (
	// ErrClockDrift reports that accepting a timestamp would put the HLC
	// further ahead of the physical clock than the configured maximum drift.
	// The executor answers 503 with __propName "MaxClockDrift".
	ErrClockDrift = errors.New("rpc: HLC clock drift exceeds the maximum")

	// ErrCounterOverflow reports that the HLC counter would exceed
	// MaxTimestampCounter (too many events within one millisecond, or a
	// remote timestamp already at the limit). The executor answers 500 with
	// __propName "Counter".
	ErrCounterOverflow = errors.New("rpc: HLC counter overflow")

	// ErrMalformedTimestamp is wrapped by every ParseTimestamp error, so the
	// executor can tell a bad `__ts` (400, __propName "__ts") from other
	// failures with errors.Is.
	ErrMalformedTimestamp = errors.New("rpc: malformed HLC timestamp")
)

// Timestamp is a hybrid logical clock value: wall time in milliseconds, a counter and a node id.
//
// On the wire it is "%015d:%05d:<nodeId>" (unix milliseconds, counter, node
// id). Only values with 0 <= Millis <= 999999999999999, Counter <=
// MaxTimestampCounter and a non-empty NodeID without ':' survive a round trip
// through String and ParseTimestamp; an HLC only ever produces such values
// (for any physical time after 1970).
type Timestamp struct {
	Millis  int64
	Counter uint32
	NodeID  string
}

// ParseTimestamp parses the wire form "%015d:%05d:<nodeId>".
//
// It is strict, because a `__ts` we cannot read exactly must be answered with
// 400 rather than merged approximately: exactly three ':'-separated fields,
// exactly 15 ASCII digits of milliseconds, exactly 5 ASCII digits of counter
// (no signs, spaces or other widths) and a non-empty node id. The error says
// which rule was broken and wraps ErrMalformedTimestamp.
func ParseTimestamp(s string) (Timestamp, error) {
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
	return fmt.Errorf("%w %q: %s", ErrMalformedTimestamp, s, fmt.Sprintf(format, args...))
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

// HLCConfig configures an HLC.
type HLCConfig struct {
	// NodeID identifies this clock in every timestamp it issues (the host
	// uses its MQTT client id). Required; must not contain ':'.
	NodeID string
	// Now is the physical clock; nil means time.Now. Tests inject a fake.
	Now func() time.Time
	// MaxDrift is how far the HLC may run ahead of the physical clock; zero
	// or negative means DefaultMaxClockDrift (1 minute).
	MaxDrift time.Duration
}

// HLC is a hybrid logical clock, safe for concurrent use. There should be one
// per application (ADR-0007), shared by everything that publishes or receives.
type HLC struct {
	now        func() time.Time
	maxDriftMs int64 // drift in whole ms: drift (an integer number of ms) > MaxDrift  <=>  drift > floor(MaxDrift/ms)
	mu         sync.Mutex
	ts         Timestamp
}

// NewHLC returns a clock starting at the physical time, counter 0.
//
// It panics if cfg.NodeID is empty or contains ':': such a clock would stamp
// every message with a `__ts` that peers (and ParseTimestamp) reject, which is
// a configuration bug better caught at start-up than on the wire.
func NewHLC(cfg HLCConfig) *HLC {
	if cfg.NodeID == "" {
		panic("rpc: NewHLC: empty NodeID")
	}
	if strings.Contains(cfg.NodeID, ":") {
		panic(fmt.Sprintf("rpc: NewHLC: NodeID %q contains ':', which the __ts format cannot carry", cfg.NodeID))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxDrift <= 0 {
		cfg.MaxDrift = DefaultMaxClockDrift
	}
	h := &HLC{now: cfg.Now, maxDriftMs: cfg.MaxDrift.Milliseconds()}
	h.ts = Timestamp{Millis: h.physicalMillis(), NodeID: cfg.NodeID}
	return h
}

func (h *HLC) physicalMillis() int64 { return h.now().UnixMilli() }

// Now performs the HLC send/local event and returns the new value (zero on error), to be put
// on an outbound publish as `__ts`.
//
// Wall time moves to max(own, physical now); when it did not advance (the
// physical clock stood still or went backwards) the counter is incremented so
// every value is strictly greater than the previous one, otherwise it resets
// to 0. Errors leave the clock unchanged: ErrCounterOverflow when the counter
// would pass MaxTimestampCounter, ErrClockDrift when the clock is ahead of
// physical time by more than MaxDrift (typically after merging a remote
// timestamp from a fast clock, or the physical clock stepping back).
func (h *HLC) Now() (Timestamp, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := h.physicalMillis()
	next := Timestamp{Millis: h.ts.Millis, NodeID: h.ts.NodeID}
	var c uint64
	if pt > next.Millis {
		next.Millis = pt
	} else {
		c = uint64(h.ts.Counter) + 1
	}
	if err := h.check(next.Millis, c, pt); err != nil {
		return Timestamp{}, err
	}
	next.Counter = uint32(c)
	h.ts = next
	return next, nil
}

// Update performs the HLC receive event, merging remote (an inbound `__ts`)
// into the clock so that everything stamped afterwards orders after it.
//
// Wall time moves to max(own, remote, physical now); the counter continues
// from whichever of own and remote supplied that wall time (the larger of
// both, plus one, on a tie) and resets to 0 when physical time is strictly
// ahead of both. Errors leave the clock unchanged: ErrClockDrift when the
// result would be ahead of physical time by more than MaxDrift (a remote from
// the future, or our own clock already too far ahead), ErrCounterOverflow when
// the counter would pass MaxTimestampCounter. remote.NodeID is not used.
func (h *HLC) Update(remote Timestamp) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := h.physicalMillis()
	own := h.ts
	next := Timestamp{Millis: max(own.Millis, remote.Millis, pt), NodeID: own.NodeID}
	// Counters are widened so a remote Counter near MaxUint32 cannot wrap.
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
	if err := h.check(next.Millis, c, pt); err != nil {
		return err
	}
	next.Counter = uint32(c)
	h.ts = next
	return nil
}

// check validates a candidate value against the drift and counter limits.
// Drift is checked first: when a value is both too far ahead and at the
// counter limit, the drift is the cause worth reporting.
// The counter is passed widened so that an increment can never wrap.
func (h *HLC) check(millis int64, counter uint64, pt int64) error {
	if millis-pt > h.maxDriftMs {
		return ErrClockDrift
	}
	if counter > MaxTimestampCounter {
		return ErrCounterOverflow
	}
	return nil
}

// Current returns the clock's value without advancing it (for reading, e.g.
// ordering or fencing; use Now to stamp a message).
func (h *HLC) Current() Timestamp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts
}
