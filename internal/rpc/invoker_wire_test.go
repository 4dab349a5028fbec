package rpc_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A call the broker would refuse (nested calls carry metadata a guest
// chose) fails at once with an error that says what is wrong, and is never
// published: mosquitto would drop the invoker's connection, and with it
// every call in flight. The invoker stays connected and calls on.
func TestCallStringsCheckedBeforeSending(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	var dials atomic.Int32
	inv := newInvoker(t, u, rpc.InvokerConfig{Session: session.Config{Dial: func(ctx context.Context, _ autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, err
		}
		return packets.NewThreadSafeConn(c), nil
	}}})
	r := newResponder(t, u)
	for _, c := range []struct {
		name, want string
		adjust     func(*rpc.Call)
	}{
		{"metadata value with a newline", `metadata "k": value: character U+000A`,
			func(c *rpc.Call) { c.Metadata = map[string]string{"k": "a\nb"} }},
		{"metadata key with a control", `metadata "k\x01": key: character U+0001`,
			func(c *rpc.Call) { c.Metadata = map[string]string{"k\x01": "v"} }},
		{"metadata value too long", "value of 16385 bytes, more than 16384",
			func(c *rpc.Call) { c.Metadata = map[string]string{"k": strings.Repeat("v", rpc.MaxMetadataValue+1)} }},
		{"timestamp with a newline", `timestamp "1\n": character U+000A`,
			func(c *rpc.Call) { c.Timestamp = "1\n" }},
		{"content type with a newline", `content type "text/plain\n": character U+000A`,
			func(c *rpc.Call) { c.ContentType = "text/plain\n" }},
		{"topic with a control", `topic "rpc/scripted/\u0085": character U+0085`,
			func(c *rpc.Call) { c.Topic = "rpc/scripted/\u0085" }},
		{"topic with a wildcard", `topic "rpc/+/cmd": not a topic name`,
			func(c *rpc.Call) { c.Topic = "rpc/+/cmd" }},
		{"payload marked UTF-8 that is not", "payload is marked UTF-8",
			func(c *rpc.Call) { c.Payload, c.Format = []byte{0xff}, abi.FormatUTF8 }},
	} {
		call := rpc.Call{Topic: askTopic, Payload: []byte("x"), Timeout: 5 * time.Second}
		c.adjust(&call)
		start := time.Now()
		_, err := inv.Invoke(ctxT(t), call)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: the refusal took %v", c.name, d)
		}
	}
	out := invokeAsync(ctxT(t), inv, rpc.Call{Topic: askTopic, Payload: []byte("ok"), Timeout: 5 * time.Second})
	r.answer(r.next(), abi.StatusOK, "done")
	if o := wait(t, out); o.err != nil || string(o.res.Payload) != "done" {
		t.Fatalf("a good call afterwards: %+v", o)
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("the invoker connected %d times: the broker dropped it", n)
	}
}

// An invoker that speaks plain MQTT to a TLS listener is told so, not
// "context deadline exceeded" alone (issue 36 item 10).
func TestInvokerPlainToTLSListener(t *testing.T) {
	pki := testkit.NewPKI(t)
	certFile, keyFile := pki.Server(t, "127.0.0.1")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = c.Read(make([]byte, 64)); _ = c.Close() }() // the TLS handshake fails on the CONNECT
		}
	}()
	u, _ := url.Parse("mqtt://" + ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: u}})
	if err == nil || !strings.Contains(err.Error(), "if it listens for TLS, use mqtts://") {
		t.Fatalf("err %v; want it to say the server may listen for TLS", err)
	}
}
