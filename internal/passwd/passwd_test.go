package passwd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func check(t *testing.T, f *File, name, password string, want bool) {
	t.Helper()
	ok, err := f.Check(name, password)
	if err != nil {
		t.Fatalf("Check(%q): %v", name, err)
	}
	if ok != want {
		t.Fatalf("Check(%q, %q) = %v, want %v", name, password, ok, want)
	}
}

func TestSetCheckRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	if err := Set(path, "alice", "s3cret"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("a new users file: %v, mode %v; want 0600", err, st.Mode())
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "s3cret") || !strings.HasPrefix(string(b), "alice:$2") {
		t.Fatalf("users file holds %q: want alice:<bcrypt hash>", b)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	check(t, f, "alice", "s3cret", true)
	check(t, f, "alice", "wrong", false)
	check(t, f, "bob", "s3cret", false)
	check(t, f, "alice", "", false)

	// Re-read when the file changes: a new user, a changed password.
	if err := Set(path, "bob", "pw-bob"); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "alice", "new"); err != nil {
		t.Fatal(err)
	}
	check(t, f, "bob", "pw-bob", true)
	check(t, f, "alice", "new", true)
	check(t, f, "alice", "s3cret", false)

	if ok, err := Remove(path, "alice"); !ok || err != nil {
		t.Fatalf("Remove(alice) = %v, %v", ok, err)
	}
	if ok, err := Remove(path, "alice"); ok || err != nil {
		t.Fatalf("Remove(alice) again = %v, %v; want false, nil", ok, err)
	}
	check(t, f, "alice", "new", false)
	check(t, f, "bob", "pw-bob", true)
}

func TestBadFileKeepsLastUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	if err := Set(path, "alice", "pw"); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, "bob:plaintext-password\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	ok, err := f.Check("alice", "pw")
	if !ok || err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "plaintext-password") {
		t.Fatalf("Check after a bad edit = %v, %v; want true (the users last read) and an error naming line 2, not the content", ok, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"nocolon":   "alice\n",
		"plain":     "alice:secret\n",
		"twice":     strings.Repeat("a:$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n", 2),
		"badname":   "a b:$2a$10$x\n",
		"emptyname": ":$2a$10$x\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Open = %v; want an error naming the file", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing users file opened")
	}
	if err := Set(filepath.Join(dir, "u"), "a:b", "pw"); err == nil {
		t.Error("a user name with a colon was accepted")
	}
	if err := Set(filepath.Join(dir, "u"), "a", strings.Repeat("x", 73)); err == nil {
		t.Error("a password over bcrypt's 72 bytes was accepted (it would be cut)")
	}
}

func TestCommentsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("# the ops team\n\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "alice", "pw"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "# the ops team\n\nalice:") {
		t.Fatalf("users file: %q; want the comment kept", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v; want the file's own 0640 kept", st.Mode().Perm())
	}
}

// Version changes when the users do (a user added, a password changed),
// not when the file is only read again or a bad edit is refused.
func TestVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	if err := Set(path, "alice", "pw"); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := f.Version()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Version(); v != v1 {
		t.Errorf("the version moved from %d to %d with the file unchanged", v1, v)
	}
	if err := Set(path, "alice", "new-pw"); err != nil {
		t.Fatal(err)
	}
	v2, err := f.Version()
	if err != nil || v2 == v1 {
		t.Fatalf("after a password change: version %d (was %d), %v; want another", v2, v1, err)
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, "bob:plaintext-password\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Version(); v != v2 || err == nil {
		t.Errorf("after a bad edit: version %d, %v; want %d (the users last read) and the error", v, err, v2)
	}
}
