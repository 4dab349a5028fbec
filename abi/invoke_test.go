package abi_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

func fullInvocation() *abi.Invocation {
	return &abi.Invocation{
		Branches: []abi.Branch{
			{Name: "a", Command: "echo", Payload: []byte("hi"), ContentType: "text/plain", Format: abi.FormatUTF8,
				Metadata: map[string]string{"k": "v", "x-trace": "1"}, Timeout: 1500 * time.Millisecond},
			{Name: "b", Command: "probe-request", ExecutorID: "host-2"},
		},
		Sync: abi.Sync{Strategy: abi.SyncMOfN, M: 1, Timeout: 2 * time.Second, OnTimeout: abi.SyncFail},
	}
}

func fullInvocationResult() *abi.InvocationResult {
	return &abi.InvocationResult{
		Failure: abi.ReasonSyncTimeout, Message: "sync timeout",
		Branches: []abi.BranchResult{
			{Name: "a", Status: abi.StatusOK, Payload: []byte("hi"), ContentType: "text/plain", Format: abi.FormatUTF8,
				Metadata: map[string]string{"probe": "yes"}, Elapsed: 1234 * time.Microsecond, Budget: time.Second},
			{Name: "b", Outcome: abi.OutcomeError, Reason: abi.ReasonCycle, Message: "nested call cycle: x/a → x/b → x/a"},
			{Name: "c", Outcome: abi.OutcomeDone, Status: abi.StatusInternalError, AppError: true, Message: "db down"},
			{Name: "d", Outcome: abi.OutcomeNotArrived},
		},
	}
}

// The wire format, built record by record with the test's own builders.
func TestInvocationWireFormat(t *testing.T) {
	inv := &abi.Invocation{
		Branches: []abi.Branch{{Name: "a", Command: "echo", Payload: []byte("hi"), Timeout: 1500 * time.Millisecond}},
		Sync:     abi.Sync{Strategy: abi.SyncAny, Timeout: 10 * time.Millisecond, OnTimeout: abi.SyncFail},
	}
	want := cat(
		rec(1, cat(recStr(1, "a"), recStr(2, "echo"), recStr(4, "hi"), recI64(8, 1500))),
		rec(2, cat(recU8(1, 1), recI64(3, 10), recU8(4, 1))),
	)
	if got := abi.AppendInvocation(nil, inv); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got % x\nwant % x", got, want)
	}
	dec, err := abi.DecodeInvocation(want)
	if err != nil || !reflect.DeepEqual(dec, inv) {
		t.Fatalf("decoded %+v, %v", dec, err)
	}

	res := &abi.InvocationResult{Branches: []abi.BranchResult{
		{Name: "a", Status: 200, Payload: []byte("hi"), Elapsed: 7},
		{Name: "b", Outcome: abi.OutcomeTimedOut, Status: 408},
	}}
	wantRes := cat(
		rec(3, cat(recStr(1, "a"), recU32(4, 200), recStr(7, "hi"), recI64(11, 7))),
		rec(3, cat(recStr(1, "b"), recU8(2, 1), recU32(4, 408))),
	)
	if got := abi.AppendInvocationResult(nil, res); !bytes.Equal(got, wantRes) {
		t.Fatalf("result encoding\n got % x\nwant % x", got, wantRes)
	}
}

func TestInvocationRoundTrip(t *testing.T) {
	inv := fullInvocation()
	enc := abi.AppendInvocation(nil, inv)
	got, err := abi.DecodeInvocation(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, inv) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, inv)
	}
	// Unknown records are skipped, at both levels.
	withUnknown := cat(recStr(40, "x"), enc, rec(1, cat(recStr(2, "echo"), recStr(99, "?"))))
	got, err = abi.DecodeInvocation(withUnknown)
	if err != nil || len(got.Branches) != 3 || got.Branches[2].Command != "echo" {
		t.Fatalf("unknown records: %+v, %v", got, err)
	}

	res := fullInvocationResult()
	for _, shared := range []bool{false, true} {
		buf := abi.AppendInvocationResult(nil, res)
		decode := abi.DecodeInvocationResult
		if shared {
			decode = abi.DecodeInvocationResultShared
		}
		got, err := decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, res) {
			t.Fatalf("shared=%t round trip\n got %+v\nwant %+v", shared, got, res)
		}
	}
}

// Sub-millisecond timeouts are rounded up, never to 0 ("none").
func TestInvocationTimeoutRoundsUp(t *testing.T) {
	inv := &abi.Invocation{Branches: []abi.Branch{{Command: "c", Timeout: time.Microsecond}},
		Sync: abi.Sync{Timeout: 1001 * time.Microsecond}}
	got, err := abi.DecodeInvocation(abi.AppendInvocation(nil, inv))
	if err != nil {
		t.Fatal(err)
	}
	if got.Branches[0].Timeout != time.Millisecond || got.Sync.Timeout != 2*time.Millisecond {
		t.Fatalf("timeouts %v, %v", got.Branches[0].Timeout, got.Sync.Timeout)
	}
}

func TestInvocationValidate(t *testing.T) {
	branch := func(name, cmd string) abi.Branch { return abi.Branch{Name: name, Command: cmd} }
	many := make([]abi.Branch, abi.MaxBranches+1)
	for i := range many {
		many[i] = branch(strings.Repeat("x", i), "c")
	}
	cases := []struct {
		name string
		inv  abi.Invocation
		want string
	}{
		{"no branch", abi.Invocation{}, "at least one branch"},
		{"too many", abi.Invocation{Branches: many}, "at most 64"},
		{"repeated name", abi.Invocation{Branches: []abi.Branch{branch("a", "c"), branch("a", "d")}}, `branch name "a" repeated`},
		{"bad command", abi.Invocation{Branches: []abi.Branch{branch("a", "x/y")}}, "may not hold '/'"},
		{"empty command", abi.Invocation{Branches: []abi.Branch{branch("a", "")}}, "empty name"},
		{"bad executor", abi.Invocation{Branches: []abi.Branch{{Command: "c", ExecutorID: "a/b"}}}, "executor id"},
		{"reserved metadata", abi.Invocation{Branches: []abi.Branch{{Command: "c", Metadata: map[string]string{"__ts": "1"}}}}, "metadata key"},
		{"utf8 payload", abi.Invocation{Branches: []abi.Branch{{Command: "c", Format: abi.FormatUTF8, Payload: []byte{0xff}}}}, "marked UTF-8 but is not"},
		{"m too big", abi.Invocation{Branches: []abi.Branch{branch("a", "c")}, Sync: abi.Sync{Strategy: abi.SyncMOfN, M: 2}}, "m_of_n with m = 2"},
		{"m zero", abi.Invocation{Branches: []abi.Branch{branch("a", "c")}, Sync: abi.Sync{Strategy: abi.SyncMOfN}}, "m_of_n with m = 0"},
		{"m without m_of_n", abi.Invocation{Branches: []abi.Branch{branch("a", "c")}, Sync: abi.Sync{M: 1}}, "only for the m_of_n"},
		{"strategy", abi.Invocation{Branches: []abi.Branch{branch("a", "c")}, Sync: abi.Sync{Strategy: 3}}, "sync strategy 3"},
		{"policy", abi.Invocation{Branches: []abi.Branch{branch("a", "c")}, Sync: abi.Sync{OnTimeout: 2}}, "on_timeout 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.inv.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("Validate() = %v, want an ErrMalformed containing %q", err, c.want)
			}
			if _, err := abi.DecodeInvocation(abi.AppendInvocation(nil, &c.inv)); err == nil {
				t.Fatal("DecodeInvocation accepted it")
			}
		})
	}
	if err := fullInvocation().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestInvocationMalformed(t *testing.T) {
	cases := map[string][]byte{
		"repeated sync":       cat(rec(1, recStr(2, "c")), rec(2, nil), rec(2, nil)),
		"repeated command":    rec(1, cat(recStr(2, "c"), recStr(2, "d"))),
		"short timeout":       rec(1, cat(recStr(2, "c"), rec(8, []byte{1}))),
		"negative timeout":    rec(1, cat(recStr(2, "c"), recI64(8, -1))),
		"truncated branch":    rec(1, []byte{2, 9, 0, 0, 0, 'c'}),
		"metadata key repeat": rec(1, cat(recStr(2, "c"), recEntry(7, "k", "1"), recEntry(7, "k", "2"))),
	}
	for name, buf := range cases {
		if _, err := abi.DecodeInvocation(buf); !errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := abi.DecodeInvocationResult(rec(3, recU8(2, 1)[:3])); !errors.Is(err, abi.ErrMalformed) {
		t.Errorf("truncated branch result: %v", err)
	}
}

func TestBranchResultErr(t *testing.T) {
	cases := []struct {
		r    abi.BranchResult
		want string
	}{
		{abi.BranchResult{Name: "a", Status: 200}, ""},
		{abi.BranchResult{Name: "a", Status: 204}, ""},
		{abi.BranchResult{Name: "a", Status: 500, AppError: true, Message: "db down"}, "nested call a: status 500 (application error): db down"},
		{abi.BranchResult{Name: "a", Status: 415}, "nested call a: status 415"},
		{abi.BranchResult{Name: "a", Outcome: abi.OutcomeTimedOut, Status: 408, Message: "cut"}, "nested call a: timed_out: cut"},
		{abi.BranchResult{Name: "a", Outcome: abi.OutcomeNotArrived}, "nested call a: not_arrived"},
		{abi.BranchResult{Name: "a", Outcome: abi.OutcomeError, Reason: abi.ReasonCycle, Message: "x"}, "nested call a: cycle: x"},
	}
	for _, c := range cases {
		err := c.r.Err()
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v: Err() = %v, want %q", c.r, err, c.want)
		}
	}
	res := &abi.InvocationResult{Failure: abi.ReasonSyncTimeout, Message: "2 of 3"}
	var ie *abi.InvocationError
	if err := res.Err(); !errors.As(err, &ie) || ie.Reason != abi.ReasonSyncTimeout ||
		err.Error() != "nested invocation failed (sync_timeout): 2 of 3" {
		t.Fatalf("Err() = %v", err)
	}
	if (&abi.InvocationResult{}).Err() != nil {
		t.Fatal("no failure must be no error")
	}
	if r := fullInvocationResult(); r.Branch("c") != &r.Branches[2] || r.Branch("zz") != nil {
		t.Fatal("Branch lookup")
	}
}

func TestEnumNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{abi.SyncAll.String(), "all"}, {abi.SyncAny.String(), "any"}, {abi.SyncMOfN.String(), "m_of_n"},
		{abi.SyncProceedWithAvailable.String(), "proceed_with_available"}, {abi.SyncFail.String(), "fail"},
		{abi.OutcomeDone.String(), "done"}, {abi.OutcomeTimedOut.String(), "timed_out"},
		{abi.OutcomeNotArrived.String(), "not_arrived"}, {abi.OutcomeError.String(), "error"},
		{abi.ReasonUnknownCommand.String(), "unknown_command"}, {abi.ReasonSyncTimeout.String(), "sync_timeout"},
		{abi.Reason(200).String(), "reason(200)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// The examples of ABI.md section 16, byte for byte.
func TestInvocationDocExample(t *testing.T) {
	inv := &abi.Invocation{Branches: []abi.Branch{{Name: "a", Command: "echo", Payload: []byte("hi"), Timeout: 1500 * time.Millisecond}},
		Sync: abi.Sync{Strategy: abi.SyncAny}}
	want := "01 23 00 00 00 01 01 00 00 00 61 02 04 00 00 00 65 63 68 6f 04 02 00 00 00 68 69 08 08 00 00 00 dc 05 00 00 00 00 00 00 02 06 00 00 00 01 01 00 00 00 01"
	if got := fmt.Sprintf("% x", abi.AppendInvocation(nil, inv)); got != want {
		t.Fatalf("invocation\n got %s\nwant %s", got, want)
	}
	res := &abi.InvocationResult{Branches: []abi.BranchResult{{Name: "a", Status: 200, Payload: []byte("hi")}}}
	want = "03 16 00 00 00 01 01 00 00 00 61 04 04 00 00 00 c8 00 00 00 07 02 00 00 00 68 69"
	if got := fmt.Sprintf("% x", abi.AppendInvocationResult(nil, res)); got != want {
		t.Fatalf("result\n got %s\nwant %s", got, want)
	}
}
