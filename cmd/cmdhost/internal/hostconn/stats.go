package hostconn

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/host/admin"
)

// Stats asks the host for its admin stats.
func (h *AdminHost) Stats(ctx context.Context, timeout time.Duration) (admin.Stats, error) {
	var st admin.Stats
	out, err := h.Call(ctx, admin.OpStats, nil, timeout)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, fmt.Errorf("the host's stats: %w", err)
	}
	return st, nil
}
