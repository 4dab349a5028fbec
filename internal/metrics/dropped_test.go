package metrics

import (
	"testing"

	"github.com/cmdhost/cmdhost/internal/rpc"
)

// Replies the executor could not send as made are counted by command and
// reason.
func TestRepliesDropped(t *testing.T) {
	c := New(Sources{})
	var obs rpc.Observer = c
	obs.ReplyDropped("echo", rpc.DropTooLarge)
	obs.ReplyDropped("echo", rpc.DropTooLarge)
	obs.ReplyDropped("badreply", rpc.DropInvalid)
	expect(t, scrape(t, c.Handler()),
		"# TYPE cmdhost_replies_dropped_total counter",
		`cmdhost_replies_dropped_total{command="echo",reason="too_large"} 2`,
		`cmdhost_replies_dropped_total{command="badreply",reason="invalid"} 1`,
	)
}
