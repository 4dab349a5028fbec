package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/state"
)

// A commit as stateCommitScript takes it, and its answer as the state
// package's results and typed errors.

// redisGuard is what a commit's first key is: a request's dedup key,
// which must hold the request's claim and holds its outcome after
// (CommitOutcome on one Redis), or the commit's marker (every other
// commit: a commit retried, or settled after its answer was lost,
// applies once).
type redisGuard struct {
	marker bool
	id     string // the marker's name; "": a new one
	key    string // the dedup key
	claim  string // the claim it must hold
	value  string // the outcome it holds after
	keep   time.Time
}

// redisSet is a key a commit sets when it applies.
type redisSet struct {
	key, value string
	at         int64 // PXAT
}

// stateCall is a commit ready to send.
type stateCall struct {
	keys   []string
	args   []any
	ops    []state.Op
	guard  redisGuard
	outbox *outboxCall // its messages; nil: none
}

// opArgs is how many arguments each op takes (stateCommitScript).
const opArgs = 13

// call makes c's keys and arguments with guard and extra. On a cluster
// its namespaces must be one. Its messages (c.Messages) go to the
// outbox of its first namespace, or, with no writes, of the namespace of
// the plugin that published the first.
func (r *RedisState) call(c *state.Commit, guard redisGuard, extra []redisSet) (*stateCall, error) {
	var spaces []string
	index := map[string]int{}
	for i := range c.Ops {
		if _, ok := index[c.Ops[i].NS]; !ok {
			spaces = append(spaces, c.Ops[i].NS)
			index[c.Ops[i].NS] = len(spaces)
		}
	}
	if r.link.cluster && len(spaces) > 1 {
		return nil, fmt.Errorf("%w: a commit to %d namespaces (%s, %s…) on a Redis Cluster, where each namespace is in a slot of its own: a call writes one namespace there",
			state.ErrInvalid, len(spaces), spaces[0], spaces[1])
	}
	var q *outboxCall
	if len(c.Messages) > 0 {
		o := r.outbox.Load()
		if o == nil {
			return nil, fmt.Errorf("%w: messages to send, and no outbox in Redis", state.ErrUnavailable)
		}
		ns := c.Messages[0].NS
		if len(spaces) > 0 {
			ns = spaces[0]
		}
		if err := state.CheckNamespace(ns); err != nil {
			return nil, err
		}
		var err error
		if q, err = o.prepare(context.Background(), ns, c.Messages); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, 1+4*len(spaces)+len(c.Ops)+len(extra)+3)
	if guard.marker {
		if guard.id == "" {
			guard.id = newCommitID()
		}
		markerNS := ""
		switch {
		case len(spaces) > 0:
			markerNS = spaces[0]
		case q != nil:
			markerNS = q.ns
		}
		keys = append(keys, spaceOf(markerNS).marker(guard.id))
	} else {
		keys = append(keys, guard.key)
	}
	for _, ns := range spaces {
		keys = append(keys, spaceOf(ns).keys()...)
	}
	am, ac := state.VersionParts(c.After)
	mode := "G"
	if guard.marker {
		mode = "M"
	}
	var nq, maxQ, maxQB int64
	if q != nil {
		nq, maxQ, maxQB = int64(q.n), q.max, q.maxBytes
	}
	args := make([]any, 0, 12+opArgs*len(c.Ops)+2*len(extra)+2*len(c.Messages))
	args = append(args, mode, guard.claim, guard.value, redisKeep(guard.keep), am, ac, len(spaces), len(c.Ops), len(extra),
		nq, maxQ, maxQB)
	for i := range c.Ops {
		op := &c.Ops[i]
		keys = append(keys, spaceOf(op.NS).item(op.Key))
		kind := "s"
		if op.Kind == state.OpDelete {
			kind = "d"
		}
		q := op.Quota.Or(r.limits.Namespace)
		vm, vc := state.VersionParts(op.If.Version)
		ttl := (op.TTL + time.Millisecond - 1).Milliseconds() // Redis counts milliseconds: a part of one is one
		args = append(args, kind, index[op.NS], op.Key, op.Value, ttl, flag(op.If.Absent), flag(op.If.HasValue),
			op.If.Value, vm, vc, op.Fence, q.MaxKeys, q.MaxBytes)
	}
	for _, e := range extra {
		keys = append(keys, e.key)
		args = append(args, e.value, e.at)
	}
	if q != nil {
		keys = append(keys, q.keys...)
		args = append(args, q.args...)
	}
	return &stateCall{keys: keys, args: args, ops: c.Ops, guard: guard, outbox: q}, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// errCommitUnknown is a commit whose answer was lost: Redis did not
// answer, or no replica confirmed it (WAIT). It may have applied.
var errCommitUnknown = errors.New("the commit's answer was lost")

// errHeld is a guarded commit whose dedup key held another value than
// its claim: nothing applied. held is what it held (nil: nothing).
type errHeld struct{ held *string }

func (e *errHeld) Error() string { return "the request's key holds another value than its claim" }

// answer reads the reply of call's script (cmd, and werr, its WAIT's
// error): the results, a typed error (nothing applied), errCommitUnknown,
// or *errHeld.
func (r *RedisState) answer(call *stateCall, cmd *redis.Cmd, werr error) ([]state.Result, error) {
	vals, err := cmd.Slice()
	switch {
	case err != nil && isOOM(err):
		// Redis refused the script whole; an earlier try of the client's
		// whose answer was lost may have run it all the same: the caller
		// reads the guard to know.
		return nil, &errRefused{err: err}
	case err != nil:
		// No answer, or an answer after the client's tries (READONLY from
		// a replica being promoted, a dial to a primary that died): an
		// earlier try may have run it.
		r.link.failed(err)
		return nil, errCommitUnknown
	case len(vals) == 0:
		return nil, stateUnavailable("committing", errors.New("an empty reply"))
	}
	kind := str(vals[0])
	if kind == "OK" && werr != nil {
		return nil, errCommitUnknown // applied on the primary alone: settled by the caller
	}
	num := func(i int) int64 {
		if i >= len(vals) {
			return 0
		}
		n, _ := vals[i].(int64)
		return n
	}
	op := func() (int, *state.Op) {
		i := int(num(1)) - 1
		if i < 0 || i >= len(call.ops) {
			return 0, &state.Op{}
		}
		return i, &call.ops[i]
	}
	switch kind {
	case "OK":
		return results(vals[1:], len(call.ops))
	case "DONE":
		v := str(vals[1])
		if v == markerAborted {
			return nil, fmt.Errorf("%w: the commit was settled unapplied; nothing was written", state.ErrUnavailable)
		}
		return parseMarker(v, len(call.ops))
	case "HELD":
		var held *string
		if s, ok := vals[1].(string); ok {
			held = &s
		}
		return nil, &errHeld{held: held}
	case "CONFLICT":
		i, o := op()
		return nil, &state.ConflictError{Op: i, Namespace: o.NS, Key: o.Key, Why: conflictWhy(num(2), o, state.VersionOf(num(3), uint16(num(4))))}
	case "QUOTA":
		_, o := op()
		return nil, &state.QuotaError{Namespace: o.NS, What: str(vals[2]), Limit: num(3)}
	case "FENCED":
		_, o := op()
		return nil, &state.FenceError{Namespace: o.NS, Key: o.Key, Missing: num(2) == 1}
	case "OUTBOX":
		ns := ""
		if call.outbox != nil {
			ns = call.outbox.ns
		}
		return nil, &state.QuotaError{Namespace: ns, What: "outbox " + str(vals[1]), Limit: num(2)}
	}
	return nil, stateUnavailable("committing", fmt.Errorf("a reply of %q", kind))
}

// isRedisAnswer reports whether err is an error Redis answered with (the
// command did not run), not the absence of an answer.
func isRedisAnswer(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, errNotReplicated)
}

// isOOM reports whether err is Redis refusing a script for want of
// memory (its maxmemory).
func isOOM(err error) bool { return isRedisAnswer(err) && strings.HasPrefix(err.Error(), "OOM") }

// errRefused is a commit Redis refused (out of memory): nothing applied
// by this try.
type errRefused struct{ err error }

func (e *errRefused) Error() string { return e.err.Error() }

// conflictWhy says why a condition failed, as state.Disk does.
func conflictWhy(code int64, op *state.Op, version uint64) string {
	switch code {
	case 1:
		return "the key exists"
	case 2:
		return "the key holds another value"
	case 3:
		return "the key does not exist"
	case 4:
		return fmt.Sprintf("the key does not exist (expected version %d)", op.If.Version)
	}
	return fmt.Sprintf("the version is %d, not %d", version, op.If.Version)
}

// results reads the script's results: existed, ms, counter per op.
func results(vals []any, n int) ([]state.Result, error) {
	if len(vals) != 3*n {
		return nil, stateUnavailable("committing", fmt.Errorf("%d results for %d ops", len(vals)/3, n))
	}
	res := make([]state.Result, n)
	for i := range res {
		e, _ := vals[3*i].(int64)
		ms, _ := vals[3*i+1].(int64)
		c, _ := vals[3*i+2].(int64)
		res[i] = state.Result{Existed: e == 1}
		if ms != 0 || c != 0 {
			res[i].Version = state.VersionOf(ms, uint16(c))
		}
	}
	return res, nil
}

// parseMarker reads a marker's results ("OK,existed,ms,counter,…").
func parseMarker(v string, n int) ([]state.Result, error) {
	f := strings.Split(v, ",")
	if len(f) == 0 || f[0] != "OK" {
		return nil, stateUnavailable("committing", fmt.Errorf("a marker of %.20q", v))
	}
	vals := make([]any, 0, len(f)-1)
	for _, s := range f[1:] {
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, stateUnavailable("committing", fmt.Errorf("a marker of %.20q", v))
		}
		vals = append(vals, x)
	}
	return results(vals, n)
}
