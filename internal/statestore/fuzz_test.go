package statestore

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// memStore is a state store in memory for the fuzz test, which runs far
// too many requests for a store that syncs each commit: unconditional
// writes and reads, conditions always holding (what the parser is
// fuzzed for does not depend on them).
type memStore struct {
	mu    sync.Mutex
	items map[string]state.Item
	seq   uint64
}

func (m *memStore) Get(_ context.Context, ns string, key []byte) (state.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[ns+"\x00"+string(key)]
	if !ok {
		return state.Item{}, state.ErrNotFound
	}
	return it, nil
}

func (m *memStore) Commit(_ context.Context, c *state.Commit) ([]state.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string]state.Item{}
	}
	res := make([]state.Result, len(c.Ops))
	for i, op := range c.Ops {
		m.seq = max(m.seq, c.After) + 1
		k := op.NS + "\x00" + string(op.Key)
		_, existed := m.items[k]
		res[i] = state.Result{Existed: existed, Version: m.seq}
		if op.Kind == state.OpDelete {
			delete(m.items, k)
		} else {
			m.items[k] = state.Item{Value: bytes.Clone(op.Value), Version: m.seq}
		}
	}
	return res, nil
}

func (m *memStore) List(context.Context, string, []byte, []byte, int) ([][]byte, bool, error) {
	return nil, false, nil
}
func (m *memStore) Outcome(context.Context, state.OutcomeID) ([]byte, bool, error) {
	return nil, false, nil
}
func (m *memStore) Usage(context.Context, string) (state.Usage, error) { return state.Usage{}, nil }
func (m *memStore) Close() error                                       { return nil }
func (m *memStore) Observe(func([]state.Change)) func()                { return func() {} }

// wellFormed reports whether b is one reply the clients parse: +OK, an
// integer, a blob string whose length is its own, $-1, or -ERR and one
// line.
func wellFormed(b []byte) bool {
	if len(b) < 3 || !bytes.HasSuffix(b, []byte("\r\n")) {
		return false
	}
	body := b[1 : len(b)-2]
	switch b[0] {
	case '+':
		return string(body) == "OK"
	case ':':
		_, err := strconv.Atoi(string(body))
		return err == nil
	case '-':
		return bytes.HasPrefix(body, []byte("ERR ")) && !bytes.ContainsAny(body, "\r\n")
	case '$':
		if string(body) == "-1" {
			return true
		}
		n, rest, ok := readLength(b[1:])
		return ok && len(rest) == n+2
	}
	return false
}

// Whatever a request's payload and timestamps, the handler answers one
// well-formed reply and does not panic; a payload it parses is an array
// that encodes back to what it read.
func FuzzRESP(f *testing.F) {
	for _, seed := range [][]byte{
		resp("SET", "k", "v"), resp("SET", "k", "v", "NX", "PX", "10"), resp("SET", "k", "v", "NEX"), resp("GET", "k"),
		resp("DEL", "k"), resp("VDEL", "k", "v"), resp("KEYNOTIFY", "k"), resp("KEYNOTIFY", "k", "STOP"),
		resp("SET", "plugin/kit-go/k", "v"), resp("GET", "\x00\r\n"), []byte("*1\r\n$3\r\nGET\r\n"), []byte("*2\r\n$3\r\nGET\r\n$-1\r\n"),
		[]byte("*9999999999\r\n"), []byte("$3\r\nGET\r\n"), nil,
	} {
		f.Add(seed, "000000000000001:00000:c", "")
	}
	srv, err := New(Config{Store: &memStore{}, Clock: testkit.NewClock(t0),
		Publish: func(context.Context, string, []byte, string) error { return nil }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, payload []byte, tsValue, ft string) {
		props := map[string]string{"__ts": tsValue}
		if ft != "" {
			props["__ft"] = ft
		}
		r, err := srv.Handle(context.Background(), &rpc.RawRequest{
			Request: &abi.Request{Payload: payload, Caller: abi.Caller{ClientID: "c"}}, Reserved: props})
		if err != nil {
			t.Fatalf("%q: %v", payload, err)
		}
		if !wellFormed(r.Payload) {
			t.Fatalf("%q: reply %q", payload, r.Payload)
		}
		if r.Timestamp != "" {
			if _, ok := ParseTimestamp(r.Timestamp); !ok {
				t.Fatalf("%q: __ts %q", payload, r.Timestamp)
			}
		}
		args, err := parseRequest(payload)
		if err != nil {
			return
		}
		strs := make([]string, len(args))
		for i, a := range args {
			strs[i] = string(a)
		}
		again, err := parseRequest(resp(strs...))
		if err != nil || len(again) != len(args) {
			t.Fatalf("%q: parsed %q, re-encoded parses to %q, %v", payload, args, again, err)
		}
		for i := range args {
			if !bytes.Equal(args[i], again[i]) {
				t.Fatalf("%q: argument %d %q, re-encoded %q", payload, i, args[i], again[i])
			}
		}
	})
}
