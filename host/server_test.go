package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// signalWriter closes seen when a write contains want.
type signalWriter struct {
	want []byte
	once sync.Once
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestServerServesAndStops: New and Run make a whole host from a Config
// (embedded broker, plugins folder, admin ops), and when Run's context
// ends Run returns and has released what New made: the broker's port is
// closed.
func TestServerServesAndStops(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	dir := t.TempDir()
	bin, err := os.ReadFile(filepath.Join(pluginDir, "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	serving := &signalWriter{want: []byte("msg=serving"), seen: make(chan struct{})}
	srv, err := host.New(host.Config{
		PluginsDir: dir,
		ExecutorID: "srv-test",
		CacheDir:   testkit.CacheDir(),
		Logger:     slog.New(slog.NewTextHandler(serving, nil)),
		Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
		Limits: host.LimitsConfig{
			ExecTimeout: 10 * time.Second,
			Pool:        2,
			MaxExpiry:   time.Hour,
			Drain:       10 * time.Second,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	select {
	case <-serving.seen:
	case err := <-ran:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the server did not start serving")
	}

	// The executor's client id is the host's: a TCP client using it is
	// refused (CONNACK 0x85) and the host serves on.
	if code := connackCode(t, srv.Broker().Host, "srv-test"); code != 0x85 {
		t.Fatalf("a TCP client with the executor's client id: CONNACK 0x%02x, want 0x85", code)
	}

	inv, err := rpc.NewInvoker(ctxT(t), rpc.InvokerConfig{Session: session.Config{Broker: srv.Broker()}})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	r, err := inv.Invoke(ctxT(t), rpc.Call{Topic: "rpc/srv-test/echo", Payload: []byte("hi"), ContentType: "text/plain", Timeout: 10 * time.Second})
	if err != nil || r.Status != 200 || string(r.Payload) != "hi" {
		t.Fatalf("echo: %+v, %v", r, err)
	}
	r, err = inv.Invoke(ctxT(t), rpc.Call{Topic: admin.Topic("srv-test", admin.OpList), ContentType: "application/json", Timeout: 10 * time.Second})
	var views []admin.PluginView
	if err != nil || r.Status != 200 || json.Unmarshal(r.Payload, &views) != nil || len(views) != 1 || views[0].Name != "echo" {
		t.Fatalf("admin list: %+v, %v", r, err)
	}
	inv.Close()

	stop()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("Run did not return after its context ended")
	}
	if c, err := net.Dial("tcp", srv.Broker().Host); err == nil {
		c.Close()
		t.Error("the embedded broker still listens after Run returned")
	}
}

// connackCode connects to addr as clientID (MQTT v5) and returns the
// CONNACK's reason code.
func connackCode(t *testing.T, addr, clientID string) byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second)) // hang guard
	cp := packets.NewControlPacket(packets.CONNECT)
	connect := cp.Content.(*packets.Connect)
	connect.ProtocolName, connect.ProtocolVersion, connect.ClientID, connect.CleanStart = "MQTT", 5, clientID, true
	if _, err := cp.WriteTo(c); err != nil {
		t.Fatal(err)
	}
	ack, err := packets.ReadPacket(c)
	if err != nil {
		t.Fatal(err)
	}
	ca, ok := ack.Content.(*packets.Connack)
	if !ok {
		t.Fatalf("got %T, want a CONNACK", ack.Content)
	}
	return ca.ReasonCode
}
