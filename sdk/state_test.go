//go:build !wasip1

package sdk

import (
	"errors"
	"fmt"
	"testing"
)

// TestStateStandin: the native stand-in keeps the host's rules, so that a
// handler's own tests see what the host would do.
func TestStateStandin(t *testing.T) {
	ResetTestState()
	s := State()
	if _, _, err := s.Get("k"); !errors.Is(err, ErrStateNotFound) {
		t.Fatalf("get of nothing: %v", err)
	}
	if err := s.Set("k", []byte("v"), IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("k", []byte("w"), IfAbsent()); !errors.Is(err, ErrStateConflict) {
		t.Fatalf("if absent on a key that exists: %v", err)
	}
	v, version, err := s.Get("k")
	if err != nil || string(v) != "v" || version == 0 {
		t.Fatalf("get: %q %d %v", v, version, err)
	}
	if err := s.Set("k", []byte("w"), IfVersion(version+1)); !errors.Is(err, ErrStateConflict) {
		t.Fatalf("a stale version: %v", err)
	}
	if n, err := s.Add("n", 41); err != nil || n != 41 {
		t.Fatalf("add: %d %v", n, err)
	}
	if _, err := s.Add("k", 1); !errors.Is(err, ErrStateNotInteger) {
		t.Fatalf("add to text: %v", err)
	}
	if _, _, err := SharedState("other").Get("k"); !errors.Is(err, ErrStateNotFound) {
		t.Fatalf("namespaces are apart: %v", err)
	}
	for i := range 300 {
		if err := s.Set(fmt.Sprintf("p/%03d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var all []string
	after := ""
	for pages := 1; ; pages++ {
		keys, more, err := s.List("p/", after)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
		if !more {
			if pages != 2 {
				t.Fatalf("%d pages for 300 keys", pages)
			}
			break
		}
		after = keys[len(keys)-1]
	}
	if len(all) != 300 || all[0] != "p/000" || all[299] != "p/299" {
		t.Fatalf("listed %d keys: %q … %q", len(all), all[0], all[len(all)-1])
	}
	if existed, err := s.Delete("k"); err != nil || !existed {
		t.Fatalf("delete: %v %v", existed, err)
	}
	if _, err := s.Delete("k", WithTTL(1)); !errors.Is(err, ErrStateInvalid) {
		t.Fatalf("delete with a TTL: %v", err)
	}
}

func TestDecodeListPageCutShort(t *testing.T) {
	for _, page := range [][]byte{{1, 5, 0, 0, 0, 'a'}, {1, 0, 0}} {
		if _, _, err := decodeListPage(page); err == nil {
			t.Fatalf("page %v decoded", page)
		}
	}
}
