package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRejectKeepsTheVersionBefore (issue 39): after v0, v1 and v2 were
// installed, Reject serves v1 again and keeps v0, not the rejected v2, as
// the previous version, so that a later Rollback serves v0 as it does
// on a host that never got v2. Rejecting again, with nothing kept before
// v0, leaves no previous version.
func TestRejectKeepsTheVersionBefore(t *testing.T) {
	v0 := readPlugin(t, "wat-echo")
	v1, v2 := variant(v0, "v1"), variant(v0, "v2")
	dir := t.TempDir()
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	for _, v := range [][]byte{v0, v1, v2} {
		if _, err := m.Install(ctx, "a", v, nil); err != nil {
			t.Fatal(err)
		}
	}
	in, err := m.Reject(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := status(m, "a"); st.Digest != digest(v1) || in.Digest != digest(v1) || in.Previous != digest(v0) {
		t.Fatalf("after reject: serving %s, previous %s; want v1 %s and v0 %s", st.Digest, in.Previous, digest(v1), digest(v0))
	}
	if prev, err := m.Previous("a"); err != nil || prev != digest(v0) {
		t.Fatalf("previous kept after reject: %s %v, want v0", prev, err)
	}
	mustEcho(t, m, "wat-echo")
	if in, err = m.Rollback(ctx, "a"); err != nil || in.Digest != digest(v0) {
		t.Fatalf("rollback after reject: %+v %v, want v0 served", in, err)
	}

	// b: v0, then v1, which is rejected: v0 serves and, with nothing kept
	// before v0, no previous version is kept. (a stops serving first:
	// both declare wat-echo.)
	if err := m.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]byte{v0, v1} {
		if _, err := m.Install(ctx, "b", v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if in, err = m.Reject(ctx, "b"); err != nil || in.Digest != digest(v0) || in.Previous != "" {
		t.Fatalf("reject with nothing kept before the previous: %+v %v", in, err)
	}
	if _, err := m.Previous("b"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a previous version is kept after the reject: %v", err)
	}
	if _, err := m.Reject(ctx, "b"); err == nil {
		t.Fatal("reject with no previous version: no error")
	}
	// The plugins' files and the folder of kept versions, which holds
	// nothing of b now.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("folder holds %v, want a.wasm, b.wasm and %s", entries, PreviousDir)
	}
	for _, kept := range []string{m.previousPath("b"), m.olderPath("b")} {
		if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s stays: %v", kept, err)
		}
	}
}

// TestRemoveClearsAFailedPlugin (issue 39): an install refused for a
// plugin new on the host leaves it listed as failed; Remove clears it,
// where it used to answer "not being served". A file that fails to load
// is cleared too and stays in the folder, listed as removed.
func TestRemoveClearsAFailedPlugin(t *testing.T) {
	dir := t.TempDir()
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	junk := []byte("\x00asm\x01\x00\x00\x00junk")
	if _, err := m.Install(ctx, "c", junk, nil); err == nil {
		t.Fatal("an invalid module was served")
	}
	if st, ok := status(m, "c"); !ok || st.State != StateFailed {
		t.Fatalf("after the refused install: %+v %v, want c failed", st, ok)
	}
	if err := m.Remove(ctx, "c"); err != nil {
		t.Fatalf("remove of a failed plugin: %v", err)
	}
	if st, ok := status(m, "c"); ok {
		t.Fatalf("c still listed after remove: %+v", st)
	}
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatalf("load after the remove: %v", errs)
	}
	if st, ok := status(m, "c"); ok {
		t.Fatalf("c listed again after a load of the folder: %+v", st)
	}

	if err := os.WriteFile(filepath.Join(dir, "d.wasm"), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := m.LoadAll(ctx); len(errs) != 1 {
		t.Fatalf("loading a bad file: %v, want its error", errs)
	}
	if err := m.Remove(ctx, "d"); err != nil {
		t.Fatalf("remove of a file that failed: %v", err)
	}
	if errs := m.LoadAll(ctx); len(errs) != 0 {
		t.Fatalf("the removed file was tried again: %v", errs)
	}
	if st, _ := status(m, "d"); st.State != StateRemoved || st.LastError != "" {
		t.Fatalf("d after remove: %+v, want removed, no error", st)
	}
	if err := m.Remove(ctx, "d"); err == nil {
		t.Fatal("a second remove: no error")
	}
}
