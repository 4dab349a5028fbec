package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// A subscriber to # that never reads its socket (keep-alive 0, so that no
// read deadline ends it either) holds up no one: every publish of another
// client is acknowledged and delivered to an honest subscriber, and the
// stuck client is dropped (counted) once its queue is over its bound (4 MiB
// here, less than the test sends; by default the bound is above what a
// client may have in flight, and a client that does not read is dropped
// by the write timeout: TestNonReaderDroppedByWriteTimeout).
// Before, at QoS 1 the publisher's own connection stopped being read once
// the stuck client's socket was full (mochi's delivery takes the
// subscriber's lock, which its writer held in a blocked write); at QoS 0
// the broker queued a copy of every message for it, without bound.
func TestStuckSubscriberHoldsUpNoOne(t *testing.T) {
	for _, qos := range []byte{0, 1} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			e, _ := startWith(t, Config{ClientQueueBytes: 4 << 20})
			// A hang guard, not a margin: 32 MiB through the broker to two
			// subscribers takes seconds on two busy cores (15 s were not
			// enough beside four other jobs); before the fix the publisher
			// hung for good.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			stuck := rawConnected(t, e.Addr(), "stuck")
			stuck.subscribe(t, "#", qos)
			honest := connect(t, ctx, e.URL(), "honest", "load/#")
			pub := connect(t, ctx, e.URL(), "publisher")

			// 32 MiB: more than the stuck client's socket buffers and
			// its queue's bound.
			const n = 128
			payload := bytes.Repeat([]byte("x"), 256<<10)
			// The honest subscriber takes each message before the next is
			// published: on busy cores a reader that lags 32 MiB behind is
			// over its own queue's bound and dropped too, which is the
			// bound working, not what this test is about.
			for i := range n {
				if _, err := pub.cm.Publish(ctx, &paho.Publish{Topic: "load/x", QoS: 1, Payload: payload}); err != nil {
					t.Fatalf("publish %d of %d not acknowledged: %v", i+1, n, err)
				}
				if p := honest.next(t, ctx); len(p.Payload) != len(payload) {
					t.Fatalf("honest subscriber got %d bytes, want %d", len(p.Payload), len(payload))
				}
			}
			// The stuck client reads at last: what was queued for it, then
			// the end of its connection (before, all 32 MiB, then nothing).
			wantClosedByBroker(t, stuck, "the stuck client")
			if got := e.Stats().ClientsDropped; got != 1 {
				t.Errorf("ClientsDropped %d, want 1", got)
			}
		})
	}
}
