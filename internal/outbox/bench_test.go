package outbox_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/outbox"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// BenchmarkGuestPublish is a message published by a guest, in process,
// up to the outbox's Send (the broker left out: Send counts and returns),
// against the same guest's echo call on the same engine:
//
//   - Echo: kit-go's kit-echo of a 100-byte payload (the call alone);
//   - Immediate: kit-publish of one 100-byte message by an idempotent
//     command, which goes out as the call runs (the outbox's queue in
//     memory, its sender);
//   - EchoCommit: the echo call of a non-idempotent command, its outcome
//     committed to the state store on disk (Pebble, synced);
//   - Outbox: kit-publish by a non-idempotent command: the message staged
//     in the call's state transaction, committed with the call's outcome
//     to the state store on disk, read back by the outbox's sender, sent
//     and taken out of the store.
//
// Each iteration is one call; the time of a publishing row ends when
// every message has been sent. The cost of publishing is Immediate's
// ns/op less Echo's, and Outbox's less EchoCommit's.
//
//	go test ./internal/outbox -run '^$' -bench GuestPublish -benchmem
func BenchmarkGuestPublish(b *testing.B) {
	testkit.Needs(b, testkit.Plugins)
	wasmBin, err := os.ReadFile("../../testdata/plugins-kit/kit-go.wasm")
	if err != nil {
		b.Fatalf("%v (run `make plugins`)", err)
	}
	grant, err := topic.ParseGrant("events/#")
	if err != nil {
		b.Fatal(err)
	}
	engine, err := wasm.NewEngine(wasm.Config{CacheDir: testkit.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = engine.Close(context.Background()) })
	p, err := engine.Load(context.Background(), "kit-go", wasmBin, wasm.PluginConfig{PoolSize: 1, Grants: wasm.Grants{
		Publish: wasm.PublishGrant{Topics: []topic.Grant{grant}, Rate: 1e12, Burst: 1 << 40}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close(context.Background()) })
	payload := make([]byte, 100)
	for i := range payload {
		payload[i] = 'x'
	}
	publish := []byte("events/bench " + string(payload))

	b.Run("Echo", func(b *testing.B) {
		req := &abi.Request{Command: "kit-echo", Payload: payload, ContentType: "text/plain"}
		for b.Loop() {
			if _, err := p.Invoke(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	// run makes b.N kit-publish calls through an outbox of cfg, commit
	// (if any) after each, and waits until the outbox has sent them all.
	run := func(b *testing.B, cfg outbox.Config, call func(i int) error) {
		var sent atomic.Int64
		all := make(chan struct{})
		var want atomic.Int64
		want.Store(-1)
		cfg.Send = func(context.Context, rpc.Message) error {
			if n := sent.Add(1); n == want.Load() {
				close(all)
			}
			return nil
		}
		o := outbox.New(cfg)
		defer o.Close()
		engine.SetPublisher(o)
		defer engine.SetPublisher(nil)
		b.ResetTimer()
		n := 0
		for b.Loop() {
			if err := call(n); err != nil {
				b.Fatal(err)
			}
			n++
		}
		want.Store(int64(n))
		if sent.Load() < int64(n) {
			select {
			case <-all:
			case <-time.After(time.Minute):
				b.Fatalf("%d of %d messages sent after a minute", sent.Load(), n)
			}
		}
	}
	invoke := func(ctx context.Context) error {
		resp, err := p.Invoke(ctx, &abi.Request{Command: "kit-publish", Payload: publish, ContentType: "text/plain", ExecutorID: "bench"})
		if err == nil && string(resp.Payload) != "ok" {
			err = fmt.Errorf("kit-publish: %s", resp.Payload)
		}
		return err
	}
	b.Run("Immediate", func(b *testing.B) {
		run(b, outbox.Config{Idempotent: func(string) bool { return true }, ExecutorID: "bench"}, func(int) error {
			return invoke(context.Background())
		})
	})
	// commit commits tx with the outcome of the i-th call, its messages
	// named as the executor names them.
	commit := func(tx *state.Txn, i int) error {
		corr := "bench-" + strconv.Itoa(i)
		if tx.Messages() > 0 {
			tx.NameMessages(func(j int) string { return state.MessageID(corr, "bench/reply", j) })
		}
		_, err := tx.Commit(context.Background(), &state.Outcome{ID: state.OutcomeID{Correlation: corr, ResponseTopic: "bench/reply"},
			Value: []byte("200"), KeepUntil: time.Now().Add(time.Hour)}, 0)
		return err
	}
	openStore := func(b *testing.B) *state.Disk {
		store, err := state.OpenDisk(state.DiskConfig{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = store.Close() })
		return store
	}
	// EchoCommit is the echo call with a non-idempotent command's commit
	// of its outcome, without a message: Outbox's baseline.
	b.Run("EchoCommit", func(b *testing.B) {
		store := openStore(b)
		req := &abi.Request{Command: "kit-echo", Payload: payload, ContentType: "text/plain"}
		i := 0
		for b.Loop() {
			tx := state.NewTxn(store, state.Limits{}, time.Now)
			if _, err := p.Invoke(state.WithTxn(context.Background(), tx), req); err != nil {
				b.Fatal(err)
			}
			if err := commit(tx, i); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Outbox", func(b *testing.B) {
		store := openStore(b)
		run(b, outbox.Config{Store: store, Idempotent: func(string) bool { return false }, ExecutorID: "bench"}, func(i int) error {
			tx := state.NewTxn(store, state.Limits{}, time.Now)
			if err := invoke(state.WithTxn(context.Background(), tx)); err != nil {
				return err
			}
			return commit(tx, i)
		})
	})
}
