package broker

import (
	"fmt"
	"testing"
	"time"
)

// The holds stay within their bounds: a user holds at most maxPerUser,
// its oldest going first; with all max held, a user holding others gives
// up its own oldest, and one holding none takes the place of the oldest
// hold of the user holding the most, not of a user's last; an ended hold
// is dropped at the next disconnect; an id left again and again does not
// grow the queues.
func TestLeftIDsBounded(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h := newLeftHolds(2) // 8 in all, 2 per user
	leave := func(id, user string) {
		h.hold(id, user, now)
		now = now.Add(time.Millisecond)
	}
	held := func(id, want string) {
		t.Helper()
		if user, ok := h.heldBy(id, now); want == "" && ok || want != "" && user != want {
			t.Errorf("%s: held by %q (%v), want %q", id, user, ok, want)
		}
	}
	for i := range 20 {
		leave(fmt.Sprintf("a-%d", i), "alice")
	}
	if all, _, alice := h.counts("alice"); all != 2 || alice != 2 {
		t.Fatalf("after alice left 20 ids: %d held, %d hers; want her last 2", all, alice)
	}
	held("a-17", "")
	held("a-18", "alice")
	held("a-19", "alice")
	for i := range 3 { // 8 held: alice 2, bob 2, carol 2, dave 1, erin 1
		leave(fmt.Sprintf("b-%d", i), "bob") // b-0 goes: bob's own
	}
	leave("c-0", "carol")
	leave("c-1", "carol")
	leave("d-0", "dave")
	leave("e-0", "erin")
	if all, users, _ := h.counts(""); all != 8 || users != 5 {
		t.Fatalf("%d held by %d users, want 8 by 5", all, users)
	}
	leave("e-1", "erin") // full, erin holds one: hers goes
	held("e-0", "")
	held("e-1", "erin")
	leave("f-0", "frank") // full, frank holds none: the oldest of a user holding the most (alice's a-18)
	held("a-18", "")
	for _, id := range []string{"a-19", "b-1", "b-2", "c-0", "c-1", "d-0", "e-1", "f-0"} {
		if _, ok := h.heldBy(id, now); !ok {
			t.Errorf("%s is not held", id)
		}
	}
	for range 100 {
		leave("again", "bob")
	}
	if n := len(h.order); n > 2*8+8+1 {
		t.Errorf("an id left 100 times: %d holds queued, want at most %d", n, 2*8+8+1)
	}
	if n := len(h.users["bob"].order); n > 2*2+8+1 {
		t.Errorf("an id left 100 times: %d of bob's holds queued, want at most %d", n, 2*2+8+1)
	}
	held("again", "bob")
	// The same, all at one instant (a coarse clock): holds that share an
	// until are still told apart.
	for range 100 {
		h.hold("same-instant", "carol", now)
	}
	if n := len(h.order); n > 2*8+8+1 {
		t.Errorf("an id left 100 times at one instant: %d queued", n)
	}
	// Each user holding one, a user holding none gets no hold.
	h2 := newLeftHolds(1)
	for i := range 4 {
		h2.hold(fmt.Sprintf("only-%d", i), fmt.Sprintf("user-%d", i), now)
	}
	if h2.hold("newcomer", "zoe", now) {
		t.Errorf("a user holding none took the last hold of another")
	}
	if all, _, _ := h2.counts(""); all != 4 {
		t.Errorf("%d held, want the 4 users' own", all)
	}

	now = now.Add(leftIDHold)
	leave("late", "dave")
	if all, users, _ := h.counts(""); all != 1 || users != 1 || len(h.order) != 1 || len(h.largest) != 1 {
		t.Errorf("after the hold: %d held by %d users, %d queued; want only the one just left", all, users, len(h.order))
	}
}

// A user churning ids evicts its own holds only: another user's hold,
// left before, stays hers however many ids the churner leaves. With the
// holds full, the churner's first id takes the place of the oldest hold
// of the user holding the most (bob, who holds three), its others each
// that of its own oldest.
func TestLeftIDChurnEvictsOnlyItsOwn(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h := newLeftHolds(4)          // 16 in all, 4 per user
	h.hold("app-1", "alice", now) // the oldest of all
	for i := range 3 {
		h.hold(fmt.Sprintf("bob-%d", i), "bob", now)
	}
	for i := range 12 { // the rest of the holds, one each
		h.hold(fmt.Sprintf("other-%d", i), fmt.Sprintf("user-%d", i), now)
	}
	for i := range 4062 {
		now = now.Add(7 * time.Millisecond) // 29 s in all
		h.hold(fmt.Sprintf("churn-%d", i), "mallory", now)
	}
	if user, ok := h.heldBy("app-1", now); !ok || user != "alice" {
		t.Fatalf("alice's id after mallory left 4,062: held %v by %q", ok, user)
	}
	all, _, mallory := h.counts("mallory")
	_, _, bob := h.counts("bob")
	if all != 16 || mallory != 1 || bob != 2 {
		t.Errorf("%d held, mallory %d, bob %d; want 16, mallory's last, and bob's two newest", all, mallory, bob)
	}
	for i := range 12 {
		if _, ok := h.heldBy(fmt.Sprintf("other-%d", i), now); !ok {
			t.Errorf("other-%d, another user's last, was dropped", i)
		}
	}
}

// BenchmarkLeftIDFull is a disconnect with the holds full (the default
// bounds: 4,000 in all, 1,000 per user), each under a new id, by users
// each holding some.
func BenchmarkLeftIDFull(b *testing.B) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h := newLeftHolds(DefaultMaxClients)
	users := make([]string, 8)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
	}
	ids := make([]string, h.max+b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%d", i)
	}
	for i, id := range ids[:h.max] {
		h.hold(id, users[i%len(users)], now)
	}
	b.ResetTimer()
	for i, id := range ids[h.max:] {
		h.hold(id, users[i%len(users)], now)
	}
}
