package clientcmd

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host/admin"
)

// An admin event (the audit of an install) is a happening of watch that
// says what was done, by whom and what came of it, not a timeout's budget.
func TestWatchShowsAdminEvents(t *testing.T) {
	w := &watcher{executor: "h"}
	w.noteEvent([]byte(`{"kind":"admin","plugin":"greet","digest":"1a2b3c4d5e6f7a8b","type":"install","op":"install","invoker":"ops-1","verdict":"refused","reason":"a clash","time":"2026-11-26T00:00:00Z"}`))
	f := w.frame(admin.Stats{}, time.Now())
	if len(f.Happenings) != 1 {
		t.Fatalf("happenings %+v", f.Happenings)
	}
	h := f.Happenings[0]
	if h.Kind != "admin" || h.Plugin != "greet" || h.Detail != "install refused 1a2b3c4d5e6f by ops-1 a clash" || strings.Contains(h.Detail, " of ") {
		t.Errorf("admin happening: %+v", h)
	}
}
