package broker

import (
	"fmt"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The ids held for the users who left them stay within maxLeftIDs: past
// it the first left is forgotten, an ended hold is dropped at the next
// disconnect, and an id left again and again does not grow the order
// they wait in.
func TestLeftIDsBounded(t *testing.T) {
	clk := testkit.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	g := &guard{cfg: &Config{MaxClients: 2}, acl: &ACL{}, left: map[string]leftID{}, clock: clk}
	leave := func(id, user string) {
		cl := &mqtt.Client{ID: id, Net: mqtt.ClientConnection{Listener: "tcp"}}
		cl.Properties.Username = []byte(user)
		g.OnDisconnect(cl, nil, false)
		clk.Add(time.Millisecond)
	}
	max := g.maxLeftIDs() // 8
	for i := 0; i < 20; i++ {
		leave(fmt.Sprintf("id-%d", i), "alice")
	}
	if len(g.left) != max {
		t.Fatalf("%d ids held after 20 left, want the bound %d", len(g.left), max)
	}
	for i := 0; i < 20; i++ {
		user, held := g.leftBy(fmt.Sprintf("id-%d", i))
		if want := i >= 20-max; held != want || (held && user != "alice") {
			t.Errorf("id-%d: held %v by %q; want held %v (the last %d left are)", i, held, user, want, max)
		}
	}
	for i := 0; i < 10*max; i++ {
		leave("again", "bob")
	}
	if n := len(g.leftOrder); n > 2*max+1 {
		t.Errorf("an id left %d times: %d waiting, want at most %d", 10*max, n, 2*max+1)
	}
	if user, held := g.leftBy("again"); !held || user != "bob" {
		t.Errorf("the id left last: held %v by %q", held, user)
	}
	// The same, all at one instant (a coarse clock): holds that share an
	// until are still told apart.
	for i := 0; i < 10*max; i++ {
		cl := &mqtt.Client{ID: "same-instant", Net: mqtt.ClientConnection{Listener: "tcp"}}
		g.OnDisconnect(cl, nil, false)
	}
	if n := len(g.leftOrder); n > 2*max+1 {
		t.Errorf("an id left %d times at one instant: %d waiting, want at most %d", 10*max, n, 2*max+1)
	}
	clk.Add(leftIDHold)
	leave("late", "carol")
	if len(g.left) != 1 || len(g.leftOrder) != 1 {
		t.Errorf("after the hold: %d held, %d waiting; want only the one just left", len(g.left), len(g.leftOrder))
	}
}

// BenchmarkLeftIDFull is a disconnect with the table of held ids full
// (the default bound: 4,000), each under a new id.
func BenchmarkLeftIDFull(b *testing.B) {
	clk := testkit.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	g := &guard{cfg: &Config{MaxClients: DefaultMaxClients}, acl: &ACL{}, left: map[string]leftID{}, clock: clk}
	cl := &mqtt.Client{Net: mqtt.ClientConnection{Listener: "tcp"}}
	ids := make([]string, g.maxLeftIDs()+b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%d", i)
	}
	for _, id := range ids[:g.maxLeftIDs()] {
		cl.ID = id
		g.OnDisconnect(cl, nil, false)
	}
	b.ResetTimer()
	for _, id := range ids[g.maxLeftIDs():] {
		cl.ID = id
		g.OnDisconnect(cl, nil, false)
	}
}
