package cache

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

var tallyNS = "plugin/tally"

// addOp is the write of a call that adds 1 to the counter it read: set
// n+1 if the version is still v (Absent when v is 0).
func addOp(t *testing.T, rs *RedisState) state.Op {
	t.Helper()
	op := state.Op{Kind: state.OpSet, NS: tallyNS, Key: []byte("n"), Value: []byte("1"), If: state.Cond{Absent: true}}
	it, err := rs.Get(context.Background(), tallyNS, []byte("n"))
	switch {
	case err == nil:
		n, _ := strconv.Atoi(string(it.Value))
		op.Value, op.If = []byte(strconv.Itoa(n+1)), state.Cond{Version: it.Version}
	case !errors.Is(err, state.ErrNotFound):
		t.Fatal(err)
	}
	return op
}

// warmUp has d's Redis load the commit and settle scripts: a commit, in
// a namespace of its own.
func warmUp(t *testing.T, d *RedisDedup[string]) {
	t.Helper()
	d.State(state.Limits{})
	e := claimFirst(t, d, "warm-up-"+d.instance)
	op := state.Op{Kind: state.OpSet, NS: "warm-up", Key: []byte("k")}
	if _, err := d.CommitOutcome(e, "warm", time.Time{}, []state.Op{op}, nil, "unknown"); err != nil {
		t.Fatal(err)
	}
	d.Complete(claimFirst(t, d, "warm-up-settle-"+d.instance), "warm", time.Time{})
}

func counter(t *testing.T, rs *RedisState) string {
	t.Helper()
	it, err := rs.Get(context.Background(), tallyNS, []byte("n"))
	if errors.Is(err, state.ErrNotFound) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(it.Value)
}

func claimFirst(t *testing.T, d *RedisDedup[string], corr string) *Entry[string] {
	t.Helper()
	e, first, err := d.Claim("inv", Key{corr, "resp"}, time.Now().Add(time.Minute), false)
	if err != nil || !first {
		t.Fatalf("%s: first=%v %v", corr, first, err)
	}
	return e
}

// A call's writes commit in its outcome's script: the outcome and the
// write are both there after, a duplicate on another process gets the
// outcome, and the commit costs the round trip the outcome alone costs.
// A refused condition applies nothing and leaves the request claimed:
// the call runs again, or its outcome is stored as usual.
func TestRedisCommitOutcome(t *testing.T) {
	url := testkit.StartRedis(t).URL
	a, b := newRedisDedup(t, url, "a"), newRedisDedup(t, url, "b")
	defer a.Close()
	defer b.Close()
	rs := a.State(state.Limits{})
	rt := &roundTrips{}
	a.rdb.AddHook(rt)

	warmUp(t, a)
	e := claimFirst(t, a, "c1")
	op := addOp(t, rs)
	before := rt.n.Load()
	got, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{op}, nil, "unknown")
	if err != nil || got != "1" || waitDone(t, e) != "1" {
		t.Fatalf("CommitOutcome: %q %v", got, err)
	}
	if n := rt.n.Load() - before; n != 1 {
		t.Errorf("the commit took %d round trips, want 1 (the outcome's)", n)
	}
	if c := counter(t, rs); c != "1" {
		t.Fatalf("the counter is %s", c)
	}
	if dup, first, err := b.Claim("inv", Key{"c1", "resp"}, time.Now().Add(time.Minute), false); first || err != nil || waitDone(t, dup) != "1" {
		t.Fatalf("a duplicate on b: first=%v %v", first, err)
	}

	// A conflict: another process wrote the counter since the call read it.
	e2 := claimFirst(t, a, "c2")
	stale := addOp(t, rs)
	if _, err := b.State(state.Limits{}).Commit(context.Background(), &state.Commit{Ops: []state.Op{addOp(t, rs)}}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CommitOutcome(e2, "2", time.Time{}, []state.Op{stale}, nil, "unknown")
	var ce *state.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a stale write: %v, want a ConflictError", err)
	}
	select {
	case <-e2.Done():
		t.Fatal("a refused commit ended its request")
	default:
	}
	if v, _ := a.rdb.Get(context.Background(), redisKey(Key{"c2", "resp"})).Result(); v[0] != claimMark {
		t.Fatalf("after a refused commit the key holds %q, want the claim", v)
	}
	// The call runs again, on the new value.
	if got, err := a.CommitOutcome(e2, "3", time.Time{}, []state.Op{addOp(t, rs)}, nil, "unknown"); err != nil || got != "3" {
		t.Fatalf("run again: %q %v", got, err)
	}
	if c := counter(t, rs); c != "3" {
		t.Fatalf("the counter is %s, want 3", c)
	}
	// Over the namespace's quota: nothing applied; Complete stores the
	// refusal's outcome.
	e3 := claimFirst(t, a, "c3")
	big := state.Op{Kind: state.OpSet, NS: tallyNS, Key: []byte("big"), Value: make([]byte, 100), Quota: state.Quota{MaxBytes: 50}}
	if _, err := a.CommitOutcome(e3, "big", time.Time{}, []state.Op{big}, nil, "unknown"); !errors.As(err, new(*state.QuotaError)) {
		t.Fatalf("over quota: %v", err)
	}
	a.Complete(e3, "refused", time.Time{})
	if waitDone(t, e3) != "refused" {
		t.Fatal("Complete after a refused commit")
	}
	if _, err := rs.Get(context.Background(), tallyNS, []byte("big")); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a refused write applied: %v", err)
	}
}

// A request whose claim another outcome replaced (OwnerGone's, stored by
// a process that took this one for gone) commits nothing: it is answered
// that outcome.
func TestRedisCommitOutcomeHeld(t *testing.T) {
	a := newRedisDedup(t, testkit.StartRedis(t).URL, "a")
	defer a.Close()
	rs := a.State(state.Limits{})
	e := claimFirst(t, a, "taken")
	taken := formatRedisValue(outcomeMark, e.expiry, "outcome unknown")
	if err := a.rdb.Set(context.Background(), redisKey(e.key), taken, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{addOp(t, rs)}, nil, "unknown")
	if err != nil || got != "outcome unknown" || waitDone(t, e) != "outcome unknown" {
		t.Fatalf("CommitOutcome over another outcome: %q %v", got, err)
	}
	if c := counter(t, rs); c != "absent" {
		t.Fatalf("the write applied: %s", c)
	}
}

// loseAnswer makes the next pipeline that runs the state's commit script
// lose its answer: sent (Redis runs it) when sent, or not.
type loseAnswer struct {
	sent  bool
	armed atomic.Bool
}

func (l *loseAnswer) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (l *loseAnswer) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (l *loseAnswer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		commit := false
		for _, c := range cmds {
			if args := c.Args(); len(args) > 1 && args[1] == stateCommitScript.Hash() {
				commit = true
			}
		}
		if !commit || !l.armed.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		if l.sent {
			_ = next(ctx, cmds)
		}
		err := errors.New("connection reset (a lost answer)")
		for _, c := range cmds {
			c.SetErr(err)
		}
		return err
	}
}

// A commit whose answer was lost is settled by the store once Redis
// answers: found applied, the request is answered its outcome; not run,
// the claim's place goes to the outcome given for that case, and the
// writes can never apply after. Either way, once, and the same for a
// duplicate.
func TestRedisCommitOutcomeLostAnswer(t *testing.T) {
	for _, sent := range []bool{true, false} {
		name := map[bool]string{true: "ran", false: "not run"}[sent]
		t.Run(name, func(t *testing.T) {
			url := testkit.StartRedis(t).URL
			a, b := newRedisDedup(t, url, "a"), newRedisDedup(t, url, "b")
			defer a.Close()
			defer b.Close()
			rs := a.State(state.Limits{})
			warmUp(t, a) // the scripts loaded: the lost pipeline's script runs
			lose := &loseAnswer{sent: sent}
			a.rdb.AddHook(lose)
			lose.armed.Store(true)
			e := claimFirst(t, a, "lost")
			_, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{addOp(t, rs)}, nil, "not applied")
			if !errors.Is(err, ErrOutcomeUnknown) {
				t.Fatalf("a lost answer: %v, want ErrOutcomeUnknown", err)
			}
			want, counted := "1", "1"
			if !sent {
				want, counted = "not applied", "absent"
			}
			if got := waitDone(t, e); got != want {
				t.Fatalf("settled as %q, want %q", got, want)
			}
			if c := counter(t, rs); c != counted {
				t.Fatalf("the counter is %s, want %s", c, counted)
			}
			if dup, first, err := b.Claim("inv", Key{"lost", "resp"}, time.Now().Add(time.Minute), false); first || err != nil || waitDone(t, dup) != want {
				t.Fatalf("a duplicate: first=%v %v", first, err)
			}
		})
	}
}

// Redis out of memory refuses the commit whole: nothing applied, the
// request still claimed, a typed error (unavailable, naming maxmemory);
// with room again, it commits.
func TestRedisStateOutOfMemory(t *testing.T) {
	r := testkit.StartRedis(t)
	a := newRedisDedup(t, r.URL, "a")
	defer a.Close()
	rs := a.State(state.Limits{})
	e := claimFirst(t, a, "oom")
	if _, err := testkit.RedisCLI(r.Addr, "CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	_, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{addOp(t, rs)}, nil, "unknown")
	if !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "maxmemory") {
		t.Fatalf("a commit out of memory: %v", err)
	}
	if _, err := rs.Commit(context.Background(), &state.Commit{Ops: []state.Op{addOp(t, rs)}}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a direct commit out of memory: %v", err)
	}
	if c := counter(t, rs); c != "absent" {
		t.Fatalf("a refused commit applied: %s", c)
	}
	if _, err := testkit.RedisCLI(r.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.CommitOutcome(e, "1", time.Time{}, []state.Op{addOp(t, rs)}, nil, "unknown"); err != nil || got != "1" {
		t.Fatalf("with room again: %q %v", got, err)
	}
}

// Redis down: reads and commits are ErrUnavailable, and nothing
// acknowledged is lost (a persistent Redis, back, holds every write it
// acknowledged).
func TestRedisStateDown(t *testing.T) {
	r := testkit.StartPersistentRedis(t)
	a := newRedisDedup(t, r.URL, "a")
	defer a.Close()
	rs := a.State(state.Limits{})
	for i := range 20 {
		if _, err := rs.Commit(context.Background(), &state.Commit{Ops: []state.Op{addOp(t, rs)}}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	r.Kill()
	if _, err := rs.Get(context.Background(), tallyNS, []byte("n")); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a read with Redis down: %v", err)
	}
	op := state.Op{Kind: state.OpSet, NS: tallyNS, Key: []byte("n"), Value: []byte("x")}
	if _, err := rs.Commit(context.Background(), &state.Commit{Ops: []state.Op{op}}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a commit with Redis down: %v", err)
	}
	if _, _, err := rs.List(context.Background(), tallyNS, nil, nil, 10); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a list with Redis down: %v", err)
	}
	r.Restart(t)
	testkit.WaitFor(t, "Redis back", func() bool {
		_, err := rs.Get(context.Background(), tallyNS, []byte("n"))
		return err == nil
	})
	if c := counter(t, rs); c != "20" {
		t.Fatalf("after a restart the counter is %s, want the 20 commits acknowledged", c)
	}
}

// On a Redis Cluster a namespace's keys are in one slot, so a commit to
// it is one script there; a commit to two namespaces is refused, nothing
// applied. A call's writes are committed first, with a marker named after
// its request, then its outcome: calls adding to one counter from two
// processes, running again on conflict, end with the counter equal to
// the requests answered, and a commit whose answer was lost, settled
// through its marker, applies once (or never, when it did not run).
func TestRedisStateCluster(t *testing.T) {
	rc := testkit.StartRedisCluster(t, 3)
	a, b := newRedisDedup(t, rc.URL, "a"), newRedisDedup(t, rc.URL, "b")
	defer a.Close()
	defer b.Close()
	rs := a.State(state.Limits{})
	warmUp(t, a)
	warmUp(t, b)

	two := &state.Commit{Ops: []state.Op{{Kind: state.OpSet, NS: "plugin/x", Key: []byte("k")}, {Kind: state.OpSet, NS: "plugin/y", Key: []byte("k")}}}
	if _, err := rs.Commit(context.Background(), two); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("a commit to two namespaces: %v, want ErrInvalid", err)
	}
	e := claimFirst(t, a, "two")
	if _, err := a.CommitOutcome(e, "x", time.Time{}, two.Ops, nil, "unknown"); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("a call's commit to two namespaces: %v, want ErrInvalid", err)
	}
	a.Complete(e, "refused", time.Time{})

	// Namespaces spread over the masters; each one's keys in one slot.
	for i := range 20 {
		ns := "plugin/p" + strconv.Itoa(i)
		op := state.Op{Kind: state.OpSet, NS: ns, Key: []byte("k"), Value: []byte("v"), TTL: time.Hour}
		if _, err := rs.Commit(context.Background(), &state.Commit{Ops: []state.Op{op, {Kind: state.OpSet, NS: ns, Key: []byte("k2")}}}); err != nil {
			t.Fatal(err)
		}
	}
	slots := map[int64]bool{}
	for i := range 20 {
		sp := spaceOf("plugin/p" + strconv.Itoa(i))
		keys := append(sp.keys(), sp.item([]byte("k")), sp.item([]byte("k2")))
		var slot int64 = -1
		for _, k := range keys {
			s, err := a.rdb.ClusterKeySlot(context.Background(), k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if slot >= 0 && s != slot {
				t.Fatalf("namespace p%d's key %s is in slot %d, its others in %d", i, k, s, slot)
			}
			slot = s
		}
		slots[slot] = true
	}
	for i := range rc.Nodes {
		if rc.Keys(t, i) == 0 {
			t.Errorf("master %d holds no key", i)
		}
	}

	// Calls adding 1 to one counter, from two processes at once.
	const calls = 60
	var answered atomic.Int64
	values := make(chan string, calls)
	done := make(chan struct{})
	for p, d := range []*RedisDedup[string]{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			drs := d.State(state.Limits{})
			for i := p; i < calls; i += 2 {
				e := claimFirst(t, d, "add-"+strconv.Itoa(i))
				for run := 0; ; run++ {
					op := addOp(t, drs)
					got, err := d.CommitOutcome(e, string(op.Value), time.Time{}, []state.Op{op}, nil, "unknown")
					if errors.Is(err, state.ErrConflict) && run < 50 {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					values <- got
					answered.Add(1)
					break
				}
			}
		}()
	}
	<-done
	<-done
	close(values)
	seen := map[string]bool{}
	for v := range values {
		if seen[v] {
			t.Errorf("two requests answered %s: a write applied twice", v)
		}
		seen[v] = true
	}
	if c := counter(t, rs); c != strconv.Itoa(int(answered.Load())) {
		t.Fatalf("the counter is %s after %d requests answered", c, answered.Load())
	}
	// A duplicate gets the outcome; a lost answer applies once.
	if dup, first, err := b.Claim("inv", Key{"add-0", "resp"}, time.Now().Add(time.Minute), false); first || err != nil || waitDone(t, dup) == "" {
		t.Fatalf("a duplicate: first=%v %v", first, err)
	}
	for _, sent := range []bool{true, false} {
		before, _ := strconv.Atoi(counter(t, rs))
		lose := &loseAnswer{sent: sent}
		a.rdb.AddHook(lose)
		lose.armed.Store(true)
		e := claimFirst(t, a, "lost-"+strconv.FormatBool(sent))
		op := addOp(t, rs)
		if _, err := a.CommitOutcome(e, string(op.Value), time.Time{}, []state.Op{op}, nil, "not applied"); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("a lost answer: %v", err)
		}
		want, count := string(op.Value), before+1
		if !sent {
			want, count = "not applied", before
		}
		if got := waitDone(t, e); got != want {
			t.Errorf("sent=%v: settled as %q, want %q", sent, got, want)
		}
		if c := counter(t, rs); c != strconv.Itoa(count) {
			t.Errorf("sent=%v: the counter is %s, want %d", sent, c, count)
		}
	}
}
