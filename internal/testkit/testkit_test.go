package testkit_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Concurrent writers lose nothing, and readers may read meanwhile.
func TestLogBufferConcurrentWrites(t *testing.T) {
	const writers, lines = 8, 100
	var b testkit.LogBuffer
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				_, _ = b.Write([]byte("w" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + "\n"))
				_ = b.Contains("w0-0")
			}
		}()
	}
	wg.Wait()
	for w := range writers {
		if !b.Contains("w" + strconv.Itoa(w) + "-" + strconv.Itoa(lines-1) + "\n") {
			t.Fatalf("writer %d's last line is missing", w)
		}
	}
	if got, want := len(b.String()), writers*(10*5+90*6); got != want {
		t.Fatalf("%d bytes written, want %d", got, want)
	}
}

// Two calls, even of one test, never return the same name.
func TestRunNameDiffers(t *testing.T) {
	a, b := testkit.RunName(t, "p-"), testkit.RunName(t, "p-")
	if a == b {
		t.Fatalf("both calls returned %q", a)
	}
}

// A client receives, in order, what is published on its subscription,
// user properties included.
func TestClientRoundTrip(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	c := testkit.Dial(t, u, "testkit-"+t.Name())
	c.Subscribe(t, "testkit/echo")
	for i := range 3 {
		c.Publish(t, &paho.Publish{QoS: 1, Topic: "testkit/echo", Payload: []byte{'0' + byte(i)},
			Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "k", Value: "v"}}}})
	}
	for i := range 3 {
		p := c.Next(t)
		if string(p.Payload) != string([]byte{'0' + byte(i)}) || len(p.Properties.User) != 1 || p.Properties.User[0].Value != "v" {
			t.Fatalf("message %d: %q %+v", i, p.Payload, p.Properties.User)
		}
	}
}

// skipRecorder is a testing.TB that records a skip instead of stopping.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Helper()                          {}
func (r *skipRecorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

// Needs skips under -short, saying what the test needs, and only then.
func TestNeeds(t *testing.T) {
	r := &skipRecorder{TB: t}
	testkit.Needs(r, testkit.Mosquitto)
	if testing.Short() != (r.skipped != "") || testing.Short() && !strings.Contains(r.skipped, "needs mosquitto") {
		t.Fatalf("short %v: skipped %q", testing.Short(), r.skipped)
	}
}
