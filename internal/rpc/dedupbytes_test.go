package rpc

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

func withPayload(b []byte) func(*packets.Publish) {
	return func(p *packets.Publish) { p.Payload = b }
}

// Replies kept for duplicates are bounded in bytes (Config.MaxDedupBytes):
// 24 replies of 1 MiB with an hour's expiry keep at most the bound, the
// first receipts are answered whole, a duplicate of a request whose reply
// was kept gets it again, and a duplicate of one whose reply was not gets
// the documented 500 and is not run again.
func TestDedupStoreBoundedInBytes(t *testing.T) {
	const (
		bound = 4 << 20
		n     = 24
	)
	var ran atomic.Int64
	logs := &testkit.LogBuffer{}
	// One invoker sends them all: no per-invoker share here, the store's
	// bound is what is tested (cache's tests cover the shares of it).
	h := start(t, Config{MaxDedupBytes: bound, MaxDedupPerInvoker: -1, Logger: slog.New(slog.NewTextHandler(logs, nil))},
		Command{Name: "echo", Handler: countingEcho(&ran)})
	s := &sender{harness: h}
	const topic = "rpc/exec-1/echo"
	payload := bytes.Repeat([]byte("x"), 1<<20)
	for i := range n {
		resp := s.send(req(topic, 0, withCorrelation(i), withExpiry(3600), withPayload(payload)))
		wantStatus(t, "first receipt", resp, "200")
		if !bytes.Equal(resp.Payload, payload) {
			t.Fatalf("request %d: the first receipt's reply is %d bytes, want the whole %d", i, len(resp.Payload), len(payload))
		}
	}
	st := h.exec.DedupStats()
	if limit := int64(bound + n*digestThreshold); st.Bytes > limit {
		t.Fatalf("the dedup store holds %d bytes of replies; want at most %d (the bound and %d digests)", st.Bytes, limit, n)
	}
	if st.Digested == 0 || st.Digested > n-3 {
		t.Fatalf("%d replies kept as digests; want those past the first 3 MiB", st.Digested)
	}

	// The first reply was kept whole; the last one is a digest.
	resp := s.send(req(topic, 0, withCorrelation(0), withExpiry(3600), withPayload(payload)))
	wantStatus(t, "duplicate of a kept reply", resp, "200")
	if !bytes.Equal(resp.Payload, payload) {
		t.Fatalf("duplicate of a kept reply: %d bytes, want the whole %d", len(resp.Payload), len(payload))
	}
	resp = s.send(req(topic, 0, withCorrelation(n-1), withExpiry(3600), withPayload(payload)))
	wantStatus(t, "duplicate of a reply kept as a digest", resp, "500")
	msg, _ := user(resp, "__stMsg")
	if !strings.Contains(msg, "status 200") || !strings.Contains(msg, "--max-dedup-bytes") || !strings.Contains(msg, "not run again") {
		t.Fatalf("__stMsg %q: want the reply's status, the flag and that the request is not run again", msg)
	}
	if len(resp.Payload) != 0 {
		t.Fatalf("the digest's 500 carries %d bytes of payload", len(resp.Payload))
	}
	// Logged once a minute at most (the harness's clock stands still).
	if got := strings.Count(logs.String(), "dedup store over --max-dedup-bytes"); got != 1 {
		t.Fatalf("%d log lines about replies kept as digests; want 1:\n%s", got, logs)
	}
	if got := ran.Load(); got != n {
		t.Fatalf("echo ran %d times for %d requests and 2 duplicates; want %d", got, n, n)
	}
}
