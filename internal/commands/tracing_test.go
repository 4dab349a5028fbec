package commands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The execute span names the verified caller, its user and client id cut
// and cleaned as in the log (a client id may be 64 KiB of control
// characters); a call with none names nobody.
func TestTracedNamesTheCaller(t *testing.T) {
	spans := testkit.NewSpans(t)
	tracer := spans.Tracer("test")
	origin := func(string) (string, string, bool) { return "echo", strings.Repeat("d", 64), true }
	h := commands.Traced(origin, func(context.Context, *abi.Request) (*abi.Response, error) { return &abi.Response{}, nil })
	call := func(name string, c abi.Caller) {
		ctx, span := tracer.Start(context.Background(), name)
		if _, err := h(ctx, &abi.Request{Command: "echo", Caller: c}); err != nil {
			t.Fatal(err)
		}
		span.End()
	}
	call("alice", abi.Caller{User: "alice", ClientID: "alice-cli"})
	call("hostile", abi.Caller{ClientID: "\x1b[2J" + strings.Repeat("x", 70_000)})
	call("anonymous", abi.Caller{})

	alice := spans.Until(t, "alice")
	if testkit.SpanAttr(alice, "cmdhost.caller.user") != "alice" || testkit.SpanAttr(alice, "cmdhost.caller.client_id") != "alice-cli" ||
		testkit.SpanAttr(alice, "cmdhost.plugin") != "echo" {
		t.Errorf("alice's call: %v", alice.Attributes())
	}
	hostile := testkit.SpanAttr(spans.Until(t, "hostile"), "cmdhost.caller.client_id")
	if len(hostile) > 128*3 || strings.Contains(hostile, "\x1b") || !strings.Contains(hostile, "xxx") {
		t.Errorf("a hostile client id reached the span as %d bytes: %.40q", len(hostile), hostile)
	}
	if a := spans.Until(t, "anonymous"); testkit.SpanAttr(a, "cmdhost.caller.client_id") != "" || testkit.SpanAttr(a, "cmdhost.caller.user") != "" {
		t.Errorf("a call without a verified caller names one: %v", a.Attributes())
	}
}
