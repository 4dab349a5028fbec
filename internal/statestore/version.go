package statestore

import (
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/state"
)

// DefaultNodeID is the node id of the versions' HLCs when
// Config.NodeID is "".
const DefaultNodeID = "cmdhost"

// versionString writes a store version (milliseconds and a counter,
// state.VersionOf) as an HLC, the protocol's version.
func versionString(v uint64, node string) string {
	ms, counter := state.VersionParts(v)
	return hlc.Timestamp{Millis: ms, Counter: uint32(counter), NodeID: node}.String()
}

// Version is the store version of an HLC (state.VersionOf): a write's
// must follow its request's timestamp's, and a client reads a reply's
// __ts as the key's version. A counter past the version's 16 bits
// takes the last of the millisecond (a write after it is in the next
// millisecond, still later).
func Version(ts hlc.Timestamp) uint64 {
	if ts.Millis < 0 {
		return 0
	}
	return state.VersionOf(ts.Millis, uint16(min(ts.Counter, 0xffff)))
}

// ParseTimestamp reads an HLC as the clients write it: three fields
// split on ':', milliseconds (1 to 15 digits) and a counter (1 to 5
// digits, hlc.MaxCounter at most) in decimal, padded or not, and a
// node id that is not empty. Its String is the canonical form, which
// the store compares fencing tokens in.
func ParseTimestamp(s string) (hlc.Timestamp, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[2] == "" {
		return hlc.Timestamp{}, false
	}
	ms, ok := digits(parts[0], 15)
	if !ok {
		return hlc.Timestamp{}, false
	}
	c, ok := digits(parts[1], 5)
	if !ok || c > hlc.MaxCounter {
		return hlc.Timestamp{}, false
	}
	return hlc.Timestamp{Millis: ms, Counter: uint32(c), NodeID: parts[2]}, true
}

// digits reads 1 to max ASCII decimal digits.
func digits(s string, max int) (int64, bool) {
	if s == "" || len(s) > max {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int64(s[i]-'0')
	}
	return v, true
}

// ahead reports whether ts is more than skew ahead of now.
func ahead(ts hlc.Timestamp, now time.Time, skew time.Duration) bool {
	return ts.Millis-now.UnixMilli() > skew.Milliseconds()
}
