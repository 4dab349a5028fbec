package clientcmd

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
)

// With a broker up and no host, invoke fails fast: the request is never
// acked.
func TestInvokeNoExecutor(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	// The calls' timeout is an hour; the ack window 1.5 s. A process
	// still running after three minutes, however loaded the machine,
	// waited for the timeout: it is killed and the test fails.
	start := time.Now()
	out, errOut, code := clitest.RunWithin(t, 3*time.Minute, "invoke", "echo", "-d", "hi", "--broker", u.String(), "--executor", "nobody", "--timeout", "1h")
	if code != base.ExitNoExecutor || out != "" || !strings.Contains(errOut, "no executor answered") ||
		!strings.Contains(errOut, "is `cmdhost serve` running with --id nobody on "+u.String()) {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
	t.Logf("no executor answered: invoke exited after %v (process start and connection included)", time.Since(start).Round(time.Millisecond))

	// The plugin subcommands give up by the same rule, whatever their
	// --timeout.
	_, errOut, code = clitest.RunWithin(t, 3*time.Minute, "plugin", "list", "--broker", u.String(), "--executor", "nobody", "--timeout", "1h")
	if code != base.ExitNoExecutor || !strings.Contains(errOut, `no answer from host "nobody"`) {
		t.Fatalf("plugin list: stderr %q, status %d", errOut, code)
	}

	// --no-ack is plain v1.0: it waits for its timeout.
	_, errOut, code = clitest.Run(t, "invoke", "echo", "--no-ack", "--timeout", "500ms", "--broker", u.String(), "--executor", "nobody")
	if code != base.ExitTimeout || !strings.Contains(errOut, "no reply within --timeout 500ms on rpc/nobody/echo: is an executor serving it?") {
		t.Fatalf("--no-ack: stderr %q, status %d", errOut, code)
	}
}

// With nothing listening at the broker's address, invoke and the
// plugin subcommands that talk to a host say so at once (a refused
// connection), not after their timeout as "context deadline exceeded".
func TestNoBrokerSaidAtOnce(t *testing.T) {
	broker := "mqtt://" + clitest.FreeAddr(t)
	for _, args := range [][]string{
		{"invoke", "echo", "-d", "hi", "--broker", broker, "--timeout", "10m"},
		{"plugin", "list", "--broker", broker, "--executor", "cli-host"},
	} {
		_, errOut, code := clitest.Run(t, args...)
		if code != base.ExitNoBroker || !strings.Contains(errOut, "no broker at "+broker+": connection refused") || !strings.Contains(errOut, "--broker") ||
			strings.Contains(errOut, "deadline exceeded") {
			t.Errorf("%v: stderr %q, status %d", args, errOut, code)
		}
	}
}

// A 499 reply, the executor's word that the call was cancelled, is printed
// as such (a scripted executor: cancels by someone else are hard to time).
func TestInvokePrintsCancelled(t *testing.T) {
	u := brokertest.StartEmbedded(t)
	up := make(chan struct{})
	var cm *autopaho.ConnectionManager
	answer := func(req *paho.Publish, status string) {
		expiry := uint32(10)
		_, err := cm.Publish(context.Background(), &paho.Publish{QoS: 1, Topic: req.Properties.ResponseTopic,
			Properties: &paho.PublishProperties{CorrelationData: req.Properties.CorrelationData, MessageExpiry: &expiry,
				User: paho.UserProperties{{Key: "__stat", Value: status}, {Key: "__stMsg", Value: "cancelled by the invoker"}}}})
		if err != nil {
			t.Error(err)
		}
	}
	cm, err := autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
		ServerUrls: []*url.URL{u}, KeepAlive: 30, CleanStartOnInitialConnection: true,
		OnConnectionUp: func(*autopaho.ConnectionManager, *paho.Connack) { close(up) },
		ConnectPacketBuilder: func(c *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			c.Properties = &paho.ConnectProperties{RequestProblemInfo: true} // or mochi strips user properties
			return c, nil
		},
		ClientConfig: paho.ClientConfig{ClientID: "scripted-executor",
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				go func() { answer(pr.Packet, "202"); answer(pr.Packet, "499") }()
				return true, nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Disconnect(context.Background())
	<-up
	if _, err := cm.Subscribe(context.Background(), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "rpc/scripted/spin", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Run(t, "invoke", "spin", "--broker", u.String(), "--executor", "scripted")
	if code != 1 || out != "" || !strings.Contains(errOut, "the call was cancelled by the executor: status 499: cancelled by the invoker") {
		t.Fatalf("stdout %q, stderr %q, status %d", out, errOut, code)
	}
}

// logLine is one line of serve's log and when the test read it.
type logLine struct {
	text string
	at   time.Time
}

// Interrupting an invoke: Ctrl-C on `cmdhost invoke spin` cancels the call
// on the host, which stops the spinning module and replaces its instance
// (in ~1 ms on an idle machine; the test asserts only that it happens long
// before the call's own 60 s timeout could have done it).
func TestInvokeInterruptCancels(t *testing.T) {
	lines := make(chan logLine, 10000)
	addr, _ := clitest.StartServe(t, func(line string) {
		select {
		case lines <- logLine{line, time.Now()}:
		default: // never block serve's log; the test reads what it needs long before
		}
	}, "--log-level", "debug")
	broker := "mqtt://" + addr

	cmd := exec.Command(clitest.Binary, "--cache-dir", clitest.CLICache(), "invoke", "spin", "--timeout", "60s", "--broker", broker, "--executor", "cli-host")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// await returns the first line of serve's log that matches, read
	// before or now: lines come in the order the host logged them, which
	// for lines of different goroutines need not be the order awaited.
	var seen []logLine
	await := func(what string, match func(string) bool) logLine {
		t.Helper()
		for i := 0; ; i++ {
			for i == len(seen) {
				select {
				case l := <-lines:
					seen = append(seen, l)
				case <-time.After(60 * time.Second): // hang guard
					t.Fatalf("serve's log shows no %s within 60 s", what)
				}
			}
			if match(seen[i].text) {
				return seen[i]
			}
		}
	}
	has := func(parts ...string) func(string) bool {
		return func(s string) bool {
			for _, p := range parts {
				if !strings.Contains(s, p) {
					return false
				}
			}
			return true
		}
	}
	await("request for spin", has("request received", "command=spin"))

	// The call runs for a second, then the user presses Ctrl-C.
	<-time.After(time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	interrupted := time.Now()
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("invoke did not exit within 60 s of SIGINT")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "the call was cancelled") {
		t.Fatalf("invoke after SIGINT: %v, stdout %q, stderr %q; want status 130 and a cancellation", err, stdout.String(), stderr.String())
	}
	t.Logf("invoke exited %v after SIGINT", time.Since(interrupted).Round(time.Millisecond))

	received := await("cancel received", has("cancel received", "command=spin"))
	t.Logf("the cancel's receipt was logged %v after SIGINT (as the test read it)", received.at.Sub(interrupted).Round(time.Millisecond))
	cancelled := await("call cancelled", has("call cancelled", "command=spin"))
	after, err := time.ParseDuration(clitest.Attr(cancelled.text, "after"))
	if err != nil {
		t.Fatalf("call cancelled line without a duration: %q", cancelled.text)
	}
	replaced := await("instance replaced", has("instance replaced", "plugin=spin"))
	// The host's own clock; log times have a resolution of 1 ms.
	stopped := logTime(t, replaced.text).Sub(logTime(t, received.text))
	t.Logf("host: call cancelled %v after the cancel's receipt, instance replaced %v after it (log times)", after, stopped)
	if after >= 30*time.Second {
		t.Errorf("the call was cancelled %v after the cancel arrived: not by the cancel", after)
	}
	if stopped >= 30*time.Second {
		t.Errorf("the instance was replaced %v after the cancel arrived: not by the cancel", stopped)
	}

	// The host serves on, spin included (on a fresh instance).
	if out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host"); out != "hi" || code != 0 {
		t.Fatalf("invoke echo after the cancel: %q %q %d", out, errOut, code)
	}
}

// logTime is the time= of a slog text line.
func logTime(t *testing.T, line string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, clitest.Attr(line, "time"))
	if err != nil {
		t.Fatalf("log line without a time: %q", line)
	}
	return at
}
