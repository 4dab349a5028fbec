package admin

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/internal/state"
)

// An import splits into batches by the store's commit bound of writes
// and by the request's size; an item no request can carry is named.
func TestImportBatches(t *testing.T) {
	items := make([]StateItem, 2*state.DefaultMaxCommitOps+1)
	for i := range items {
		items[i] = StateItem{StateKey: StateKey{Key: "k"}, StateValue: ValueOf([]byte("v"))}
	}
	starts, err := batches(items, 1<<30)
	if err != nil || len(starts) != 3 || starts[1] != state.DefaultMaxCommitOps || starts[2] != 2*state.DefaultMaxCommitOps {
		t.Fatalf("by count: %v %v", starts, err)
	}
	big := ValueOf([]byte(strings.Repeat("x", 600)))
	items = []StateItem{{StateKey: StateKey{Key: "a"}, StateValue: big}, {StateKey: StateKey{Key: "b"}, StateValue: big}, {StateKey: StateKey{Key: "c"}, StateValue: big}}
	if starts, err = batches(items, 1300); err != nil || len(starts) != 2 || starts[1] != 2 {
		t.Fatalf("by size: %v %v", starts, err)
	}
	if _, err = batches(items, 500); err == nil || !strings.Contains(err.Error(), `item 1 (key "a")`) {
		t.Fatalf("an item over the size of a request: %v", err)
	}
}
