package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A commit or an outcome whose replicas are slow. A write the primary
// applied (a state commit, with or without its request's outcome, an
// outcome stored alone or in place of its claim) whose first WAIT fell
// short is not given up at once — that would answer a request that
// succeeded "outcome unknown", or leave its outcome to be stored again
// later, for a replica that is merely slow. It is confirmed as a claim
// is (redis_confirm.go), in rounds of redisWaitTimeout, bounded by
// redisConfirmMax from when it was sent or by the request's expiry, and
// with the same ends (a replica confirms it; the store stops waiting for
// replicas; a strict Replicas with too few connected). Past the bound,
// or when a round finds the write gone, the caller does what it did
// before the rounds: the commit's answer is taken for lost and settled,
// the outcome kept here and stored again.
//
// What a round writes. WAIT waits for the replicas to acknowledge the
// replication offset of the connection's last write; a round runs on
// whatever connection the pool gives it, so it must write, and write
// after the write it confirms in the same replication stream. Any write
// would do on the same primary (a replica acknowledges an offset, which
// covers everything before it), but not after a failover: a write on a
// new primary that never got the commit would be confirmed in its place.
// So a round writes the commit's own guard key again (touchScript): if
// the primary still holds the value the commit left there (its marker's
// results, or the request's outcome — written by the commit's script
// together with its state writes, all or nothing), it sets that same
// value again, keeping its expiry, and a WAIT after it covers the whole
// commit on that primary; if the key holds anything else, nothing is
// written and the round reports the write gone (errWriteLost). Nothing
// is applied twice: the round changes no value, and never runs the
// commit's script again. An outcome stored alone (a SET of a fixed
// value) is simply set again.

// errWriteLost is a write the primary no longer holds when it is
// confirmed again (a failover lost it): its fate is settled as a lost
// answer's is.
var errWriteLost = errors.New("the write is gone from the primary before a replica confirmed it")

// touchScript writes the value of KEYS[1] again, keeping its expiry, and
// returns it (nil: the key does not exist, and nothing is written).
var touchScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then redis.call('SET', KEYS[1], v, 'KEEPTTL') end
return v`)

// roundWrite adds a round's write to pipe and returns the check of its
// reply, read after the pipeline ran: nil when the primary still holds
// the write confirmed.
type roundWrite func(ctx context.Context, pipe redis.Pipeliner) func() error

// touch is the round's write of a commit that left its guard key k
// holding a value held accepts (see above).
func touch(k string, held func(string) bool) roundWrite {
	return func(ctx context.Context, pipe redis.Pipeliner) func() error {
		// By its text: a round is rare, and a new primary may lack it.
		cmd := touchScript.Eval(ctx, pipe, []string{k})
		return func() error {
			v, err := cmd.Text()
			switch {
			case errors.Is(err, redis.Nil):
				return errWriteLost
			case err != nil:
				return err
			case !held(v):
				return errWriteLost
			}
			return nil
		}
	}
}

// confirmWrite confirms, round after round, a write the primary applied
// whose WAIT fell short with err (see above), until until; it returns
// nil once the write counts, else why not: err or a later round's WAIT
// (errNotReplicated), errWriteLost, or the error of a round Redis did
// not answer. An err that is not errNotReplicated is returned as it is.
func (s *redisLink) confirmWrite(err error, until time.Time, again roundWrite) error {
	for errors.Is(err, errNotReplicated) {
		now := time.Now()
		if !now.Before(until) {
			return err
		}
		n := s.waitingFor()
		if n <= 0 {
			return nil
		}
		if online := int(s.online.Load()); s.strict && online < n {
			return fmt.Errorf("%w: %d replicas connected, %d wanted", errNotReplicated, online, n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
		pipe := s.rdb.Pipeline()
		check := again(ctx, pipe)
		wait := max(min(redisWaitTimeout, until.Sub(now)), time.Millisecond)
		w := &waitOp{n: n, cmd: pipe.Do(ctx, "WAIT", n, wait.Milliseconds())}
		_, _ = pipe.Exec(ctx)
		cancel()
		if cerr := check(); cerr != nil {
			s.failed(cerr)
			return cerr
		}
		err = s.waited(w)
	}
	return err
}

// appliedOnPrimary reports whether cmd is the reply of a commit script
// that applied ({'OK', …}).
func appliedOnPrimary(cmd *redis.Cmd) bool {
	vals, err := cmd.Slice()
	return err == nil && len(vals) > 0 && str(vals[0]) == "OK"
}

// deadlineOf is ctx's deadline; zero when it has none.
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
