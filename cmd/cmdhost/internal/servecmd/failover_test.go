package servecmd

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// --broker given twice: the brokers of one cluster. serve and invoke
// connect to the first; when it dies, serve moves to the second without
// a restart, and an invoke given both is answered there; with every
// broker down, invoke still says so at once.
func TestBrokerFailover(t *testing.T) {
	start := func() *broker.Embedded {
		e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	first, second := start(), start()
	one, two := first.URL().String(), second.URL().String()

	var mu sync.Mutex
	var lines []string
	connectedTo := func(u string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, "msg=connected") && strings.Contains(l, "broker="+u) {
				return true
			}
		}
		return false
	}
	_, stop := clitest.StartServe(t, func(line string) {
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	}, "--broker", one, "--broker", two, "--log-level", "info")
	if !connectedTo(one) {
		t.Fatalf("serve did not connect to the first broker %s", one)
	}
	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "on the first", "--broker", one, "--broker", two, "--executor", "cli-host")
	if out != "on the first" || code != 0 {
		t.Fatalf("invoke on the first broker: %q %q %d", out, errOut, code)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "serve connected to the second broker", func() bool { return connectedTo(two) })
	out, errOut, code = clitest.RunWithin(t, time.Minute, "invoke", "echo", "-d", "on the second", "--broker", one, "--broker", two, "--executor", "cli-host")
	if out != "on the second" || code != 0 {
		t.Fatalf("invoke with the first broker down: %q %q %d", out, errOut, code)
	}
	if _, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", one, "--executor", "cli-host"); code != base.ExitNoBroker {
		t.Fatalf("invoke on the dead broker alone: exit %d, %q; want %d", code, errOut, base.ExitNoBroker)
	}
	_ = second.Close()
	if _, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", one, "--broker", two, "--executor", "cli-host"); code != base.ExitNoBroker || !strings.Contains(errOut, "no broker at "+one+" or "+two) {
		t.Fatalf("invoke with both brokers down: exit %d, %q; want %d, naming both", code, errOut, base.ExitNoBroker)
	}
	stop()
}
