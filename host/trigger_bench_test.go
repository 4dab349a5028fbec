package host_test

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// BenchmarkTelemetryVsEcho is a telemetry message's handling rate against
// an echo request's, on one host with its embedded broker, measured in
// the same run: each iteration sends a batch of echo requests (the echo
// plugin, answered) and a batch of telemetry messages to a trigger that
// does nothing (testdata/trigger's on-nop, done when the host's counters
// say handled), inFlight at a time each. It reports both rates and their
// ratio, telemetry over echo.
//
// Done is read from the admin list op every 2 ms after the batch is
// published: up to 2 ms of a batch's time is that wait's.
//
//	go test ./host -run '^$' -bench TelemetryVsEcho -benchtime 40x
func BenchmarkTelemetryVsEcho(b *testing.B) {
	testkit.Needs(b, testkit.Plugins)
	// A batch of 1,000 overruns the trigger session's Receive Maximum (64,
	// trigger.DefaultMaxInFlight): the broker holds the rest back. One
	// run in a few stalled on it until mochi's double read lock was
	// removed (issue 38, third_party/mochi-mqtt-server/CMDHOST.md).
	const batch, inFlight = 1000, 8
	dir := b.TempDir()
	testkit.InstallFile(b, "../testdata/plugins/echo.wasm", dir, "echo.wasm")
	testkit.InstallFile(b, "../testdata/plugins-alt/trigger.wasm", dir, "trigger.wasm")
	testkit.Install(b, dir, "trigger.json", []byte(`{"triggers": {"on-nop": {"concurrency": `+strconv.Itoa(inFlight)+`}}}`))
	srv := hosttest.Serve(b, host.Config{PluginsDir: dir, ExecutorID: "bench-host", CacheDir: testkit.CacheDir(), Embedded: host.EmbeddedConfig{Listen: "127.0.0.1:0"}})
	inv, err := rpc.NewInvoker(ctxT(b), rpc.InvokerConfig{Session: session.Config{Broker: srv.Broker(), ClientID: "bench-cli"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = inv.Close() })
	pubs := make([]*testkit.Client, inFlight)
	for i := range pubs {
		pubs[i] = testkit.Dial(b, srv.Broker(), "bench-sensor-"+strconv.Itoa(i))
	}
	handled := func() int64 {
		r, err := inv.Invoke(ctxT(b), rpc.Call{Topic: admin.Topic("bench-host", admin.OpList), ContentType: "application/json", Timeout: 10 * time.Second})
		var views []admin.PluginView
		if err != nil || r.Status != 200 || json.Unmarshal(r.Payload, &views) != nil {
			b.Fatalf("admin list: %+v %v", r, err)
		}
		for _, v := range views {
			for _, t := range v.Triggers {
				if t.Name == "on-nop" {
					if t.Dropped > 0 {
						b.Fatalf("on-nop dropped %d messages", t.Dropped)
					}
					return t.Handled
				}
			}
		}
		b.Fatal("on-nop is not served")
		return 0
	}
	// each runs batch calls of one on inFlight goroutines (worker w its
	// share) and returns when they have all returned.
	each := func(one func(w, i int)) {
		var wg sync.WaitGroup
		for w := range inFlight {
			wg.Go(func() {
				for i := w; i < batch; i += inFlight {
					one(w, i)
				}
			})
		}
		wg.Wait()
	}
	var echoTime, telemetryTime time.Duration
	var sent int64
	payload := []byte("0123456789abcdef0123456789abcdef")
	for b.Loop() {
		start := time.Now()
		each(func(_, i int) {
			r, err := inv.Invoke(ctxT(b), rpc.Call{Topic: "rpc/bench-host/echo", Payload: payload, ContentType: "text/plain", Timeout: 10 * time.Second})
			if err != nil || r.Status != 200 {
				b.Fatalf("echo %d: %+v %v", i, r, err)
			}
		})
		echoTime += time.Since(start)

		start = time.Now()
		each(func(w, i int) {
			pubs[w].Publish(b, &paho.Publish{QoS: 1, Topic: "bench/" + strconv.Itoa(w), Payload: payload,
				Properties: &paho.PublishProperties{ContentType: "text/plain", User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}}}})
		})
		sent += batch
		for handled() < sent {
			if time.Since(start) > testkit.Patience() {
				b.Fatalf("%d of %d messages handled after %v", handled(), sent, testkit.Patience())
			}
			time.Sleep(2 * time.Millisecond)
		}
		telemetryTime += time.Since(start)
	}
	n := float64(sent)
	echoRate, telemetryRate := n/echoTime.Seconds(), n/telemetryTime.Seconds()
	b.ReportMetric(echoRate, "echo/s")
	b.ReportMetric(telemetryRate, "telemetry/s")
	b.ReportMetric(telemetryRate/echoRate, "telemetry/echo")
}
