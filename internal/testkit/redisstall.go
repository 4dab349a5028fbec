package testkit

import (
	"strconv"
	"testing"
	"time"
)

// StallReplica stalls the replica for secs seconds (DEBUG SLEEP), as a
// loaded machine can starve it: connected and in sync, it acknowledges
// nothing meanwhile. It returns once the replica does not answer; the
// channel gets DEBUG SLEEP's error once it is back.
func (rs *RedisSentinel) StallReplica(tb testing.TB, secs float64) <-chan error {
	tb.Helper()
	stall := make(chan error, 1)
	go func() {
		_, err := RedisCLI(rs.Replica.Addr, "DEBUG", "SLEEP", strconv.FormatFloat(secs, 'f', -1, 64))
		stall <- err
	}()
	WaitFor(tb, "the replica to stall", func() bool { return !RedisAnswers(rs.Replica.Addr, 200*time.Millisecond) })
	return stall
}
