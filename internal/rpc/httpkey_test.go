package rpc

import (
	"context"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/httpout"
)

// keyHandler answers with the Idempotency-Key its first HTTP request
// would get, "none" without one.
func keyHandler(ctx context.Context, req *abi.Request) (*abi.Response, error) {
	k, ok := httpout.IdempotencyKey(ctx, req.CorrelationID, 0)
	if !ok {
		k = "none"
	}
	return &abi.Response{Payload: []byte(k)}, nil
}

// The handler of a non-idempotent command gets its request's key (its
// correlation data and response topic), which another request does not
// share; an idempotent command's gets none.
func TestHTTPIdempotencyKeyOfNonIdempotentCommands(t *testing.T) {
	h := start(t, Config{}, Command{Name: "pay", Handler: keyHandler},
		Command{Name: "look", Idempotent: true, Handler: keyHandler})
	for _, topic := range []string{"rpc/exec-1/pay", "rpc/exec-1/look"} {
		if err := h.broker.WaitSubscribed(ctx(t), topic); err != nil {
			t.Fatal(err)
		}
	}
	first := h.roundTrip(req("rpc/exec-1/pay", 1), 1)
	corr := first.Properties.CorrelationData
	want, _ := httpout.IdempotencyKey(httpout.WithRequestKey(context.Background(), corr, "resp/rpc/exec-1/pay"), corr, 0)
	if string(first.Payload) != want {
		t.Fatalf("pay: %q, want %q", first.Payload, want)
	}
	if other := h.roundTrip(req("rpc/exec-1/pay", 2), 2); string(other.Payload) == want || string(other.Payload) == "none" {
		t.Fatalf("another request's key: %q", other.Payload)
	}
	if look := h.roundTrip(req("rpc/exec-1/look", 3), 3); string(look.Payload) != "none" {
		t.Fatalf("look: %q", look.Payload)
	}
}
