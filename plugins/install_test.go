package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestInstallServesKeepsPreviousAndRollsBack: Install serves a module and
// writes it into the folder; installing another version keeps the one it
// replaces, and Rollback serves that one again (twice: back and forth).
func TestInstallServesKeepsPreviousAndRollsBack(t *testing.T) {
	v1 := readPlugin(t, "wat-echo")
	v2 := variant(v1, "v2")
	dir := t.TempDir()
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()

	in, err := m.Install(ctx, "a", v1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.Digest != digest(v1) || len(in.Commands) != 1 || in.Commands[0] != "wat-echo" || in.Previous != "" {
		t.Fatalf("first install: %+v", in)
	}
	if _, err := m.Rollback(ctx, "a"); err == nil {
		t.Fatal("rollback with no previous version kept: no error")
	}
	if in, err = m.Install(ctx, "a", v2, nil); err != nil {
		t.Fatal(err)
	}
	if in.Previous != digest(v1) {
		t.Fatalf("second install keeps %q, want v1 %s", in.Previous, digest(v1))
	}
	if st, _ := status(m, "a"); st.Digest != digest(v2) || st.State != StateServing {
		t.Fatalf("after install of v2: %+v", st)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.wasm")); err != nil || digest(b) != digest(v2) {
		t.Fatalf("a.wasm holds another module (%v)", err)
	}
	mustEcho(t, m, "wat-echo")

	for _, want := range []struct{ serving, kept []byte }{{v1, v2}, {v2, v1}} {
		in, err := m.Rollback(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := status(m, "a"); st.Digest != digest(want.serving) || in.Previous != digest(want.kept) {
			t.Fatalf("after rollback: serving %s keeping %s, want %s and %s", st.Digest, in.Previous, digest(want.serving), digest(want.kept))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.wasm")); digest(b) != digest(want.serving) {
			t.Fatal("a.wasm is not the version rolled back to")
		}
		mustEcho(t, m, "wat-echo")
	}
	// The folder holds the plugin and the kept version, no temporary file.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("folder holds %v, want a.wasm and %s", entries, PreviousDir)
	}
}

// TestInstallRefusedLeavesOldServingAndFolderAlone: a module whose
// command another plugin serves is refused with a *ClashError inside;
// the version serving goes on, the file is not written; a module that
// does not load is refused too.
func TestInstallRefusedLeavesOldServingAndFolderAlone(t *testing.T) {
	v1 := readPlugin(t, "wat-echo")
	echo := readPlugin(t, "echo")
	dir := t.TempDir()
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if _, err := m.Install(ctx, "a", v1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Install(ctx, "b", echo, nil); err != nil {
		t.Fatal(err)
	}
	// b's new version declares wat-echo, which a serves.
	_, err := m.Install(ctx, "b", variant(v1, "clash"), nil)
	var refused *RefusedError
	var clash *ClashError
	if !errors.As(err, &refused) || !errors.As(err, &clash) || clash.Command != "wat-echo" || clash.Other != "a" {
		t.Fatalf("clashing install: %v, want a refusal for a clash with a", err)
	}
	if refused.Digest != digest(variant(v1, "clash")) {
		t.Fatalf("refusal names digest %s", refused.Digest)
	}
	if st, _ := status(m, "b"); st.Digest != digest(echo) || st.State != StateServing || st.LastError == "" {
		t.Fatalf("b after the refused install: %+v (want the old version serving, the reason shown)", st)
	}
	mustEcho(t, m, "echo")
	if b, _ := os.ReadFile(filepath.Join(dir, "b.wasm")); digest(b) != digest(echo) {
		t.Fatal("b.wasm was overwritten by the refused module")
	}
	if _, err := m.Previous("b"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install kept a previous version of b: %v", err)
	}
	_, err = m.Install(ctx, "c", []byte("\x00asm\x01\x00\x00\x00junk"), nil)
	if !errors.As(err, &refused) {
		t.Fatalf("invalid module: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.wasm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an invalid module was written into the folder")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "a.wasm" && e.Name() != "b.wasm" && e.Name() != PreviousDir {
			t.Errorf("folder holds %s after the refusals", e.Name())
		}
	}
}

// TestInstallRefusesDisabled: a plugin its operator file disables is not
// installed.
func TestInstallRefusesDisabled(t *testing.T) {
	v1 := readPlugin(t, "wat-echo")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"enabled": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, dir, 0)
	_, err := m.Install(context.Background(), "a", v1, nil)
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("install of a disabled plugin: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.wasm")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a disabled plugin's module was written")
	}
}

// An install whose module file cannot be written (here a directory is in
// its way) fails saying so, and leaves the signature file as it was: the
// module the folder still holds keeps its own signature, so that a host
// that checks signatures serves it after a restart.
func TestInstallUnwritableKeepsTheSignature(t *testing.T) {
	v1 := readPlugin(t, "wat-echo")
	dir := t.TempDir()
	m, _ := newManager(t, dir, 0)
	ctx := context.Background()
	if _, err := m.Install(ctx, "a", v1, []byte("signature of v1\n")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.wasm")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Install(ctx, "a", variant(v1, "v2"), []byte("signature of v2\n")); err == nil {
		t.Fatal("an install whose file cannot be written: no error")
	}
	if b, err := os.ReadFile(file + ".sig"); err != nil || string(b) != "signature of v1\n" {
		t.Fatalf("the signature file holds %q (%v), want v1's, the module's still there", b, err)
	}
}
