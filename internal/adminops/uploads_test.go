package adminops

import (
	"testing"
	"time"
)

// An upload holds what arrived, not what its first chunk announced, and
// an abandoned one is forgotten once idle for uploadIdle, whatever else
// arrives.
func TestUploadsBounded(t *testing.T) {
	var u uploads
	t0 := time.Unix(1_800_000_000, 0)
	if _, _, r := u.add(chunk{name: "a", digest: "d", size: 256 << 20, data: []byte{1}}, t0); r != nil {
		t.Fatalf("first chunk refused: %+v", r)
	}
	if c := cap(u.byName["a"].buf); c > 1<<10 {
		t.Errorf("a 1-byte chunk announcing 256 MiB holds %d bytes", c)
	}
	if _, _, r := u.add(chunk{name: "b", digest: "e", size: 2, data: []byte{1}}, t0.Add(uploadIdle)); r != nil {
		t.Fatalf("another upload: %+v", r)
	}
	if _, held := u.byName["a"]; held {
		t.Error("the upload idle for uploadIdle is still held")
	}
}
