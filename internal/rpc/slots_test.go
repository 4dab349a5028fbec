package rpc

import "testing"

// A command's slots go to waiting requests in the order they queued, and
// a request that gives up its place passes a slot granted meanwhile on.
func TestSlotsFirstComeFirstServed(t *testing.T) {
	s := newSlots(1)
	first := s.enqueue()
	a, b, c := s.enqueue(), s.enqueue(), s.enqueue()
	granted := func(t *turn) bool {
		select {
		case <-t.granted:
			return true
		default:
			return false
		}
	}
	if !granted(first) || granted(a) {
		t.Fatal("the only slot goes to the first request, at once")
	}
	s.leave(b) // b gives up while waiting
	s.release()
	if !granted(a) || granted(c) {
		t.Fatal("a freed slot goes to the earliest waiting request")
	}
	s.release()
	if !granted(c) {
		t.Fatal("b left the line: c is next")
	}
	s.leave(c) // c was granted meanwhile: its slot is released
	if d := s.enqueue(); !granted(d) {
		t.Fatal("the slot c gave back is free")
	}
}
