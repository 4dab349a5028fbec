// Package passwd is the embedded broker's users file (`serve --users
// FILE`): one `name:hash` line per user, the hash bcrypt's (salted, slow
// on purpose, so that a copy of the file does not give the passwords
// away). The broker checks a CONNECT's user name and password against it
// (File.Check); `cmdhost user add/remove` writes it (Set, Remove).
//
// The file is re-read when it changes (its size, modification time or
// inode), so users are added and removed without a restart. A file that
// turns bad (a typo in a hand edit) keeps the users last read and the
// error is returned: a broken edit does not lock everyone out or let
// everyone in. No error or log here holds a password or a hash.
package passwd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MaxBytes bounds the users file: a larger one is not a users file.
const MaxBytes = 4 << 20

// cost is bcrypt's cost for new hashes (2^cost rounds, tens of ms).
const cost = bcrypt.DefaultCost

// dummyHash is checked against when the user is unknown, so that an
// unknown user costs the same time as a wrong password (the time of a
// refusal does not tell which names exist). Made at first use: every
// command of the binary links this package.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("cmdhost: no such user"), cost)
	return h
})

// File is a users file, read at Open and again whenever it changed.
// Safe for concurrent use.
type File struct {
	path string

	mu      sync.Mutex
	seen    os.FileInfo       // the file as last read
	users   map[string][]byte // name → bcrypt hash
	version uint64            // bumped at each read that replaced users
	// bad is a version of the file that failed to read or parse, and
	// badErr why: checked against it, not read again, until it changes.
	bad    os.FileInfo
	badErr error
}

// Open reads the users file at path. An unreadable or malformed file is
// an error that names the file and the line, not the content.
func Open(path string) (*File, error) {
	f := &File{path: path}
	if err := f.refresh(); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Len is the number of users last read.
func (f *File) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.users)
}

// Check reports whether name and password are a user's. It re-reads the
// file first if it changed; an error says the file could not be re-read
// (the users last read were checked instead).
func (f *File) Check(name, password string) (bool, error) {
	err := f.refresh()
	f.mu.Lock()
	hash, ok := f.users[name]
	f.mu.Unlock()
	if !ok {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return false, err
	}
	return bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil, err
}

// Version returns the number of the users last read, re-reading the file
// first if it changed: it changes whenever the users do. A password
// found right against one version (Check) holds for that version only,
// which is how a cache of good logins knows to forget them. The error is
// Check's.
func (f *File) Version() (uint64, error) {
	err := f.refresh()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version, err
}

// refresh re-reads the file if its size, time or inode changed since it
// was last read.
func (f *File) refresh() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen != nil && sameVersion(f.seen, st) {
		return nil
	}
	if f.bad != nil && sameVersion(f.bad, st) {
		return f.badErr // the version that failed: not read again until it changes
	}
	b, err := readFile(f.path)
	var users map[string][]byte
	if err == nil {
		users, err = parse(f.path, b)
	}
	if err != nil {
		f.bad, f.badErr = st, err
		return err
	}
	f.seen, f.users, f.bad, f.badErr = st, users, nil, nil
	f.version++
	return nil
}

// sameVersion reports whether a and b are the same file, unchanged:
// same inode, size and modification time.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// readFile reads a regular file of at most MaxBytes.
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("users file %s: not a regular file", path)
	}
	if st.Size() > MaxBytes {
		return nil, fmt.Errorf("users file %s: %d bytes, more than %d: not a users file", path, st.Size(), MaxBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	return b, nil
}

// parse reads the lines of a users file: `name:hash`, blank lines and
// lines starting with # skipped.
func parse(path string, b []byte) (map[string][]byte, error) {
	users := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hash, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("users file %s, line %d: want name:hash (write it with `cmdhost user add NAME --users %s`)", path, n, path)
		}
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("users file %s, line %d: %w", path, n, err)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("users file %s, line %d (user %q): the hash is not bcrypt's (write it with `cmdhost user add %s --users %s`)", path, n, name, name, path)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("users file %s, line %d: user %q is there twice", path, n, name)
		}
		users[name] = []byte(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	return users, nil
}

// CheckName says why name cannot be a user's name: empty, or holding a
// colon, a space or a control character, or longer than MQTT's 65535.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty user name")
	case len(name) > 65535:
		return errors.New("user name longer than 65535 bytes (MQTT's limit)")
	case strings.HasPrefix(name, "#"):
		return fmt.Errorf("user name %q starts with # (a comment in the users file)", name)
	case strings.ContainsFunc(name, func(r rune) bool { return r == ':' || r <= ' ' || r == 0x7f }):
		return fmt.Errorf("user name %q holds a colon, a space or a control character", name)
	}
	return nil
}

// Set adds the user name with password to the users file at path, or
// changes its password; the file is made (mode 0600) if it does not
// exist. Its other lines are kept as they are. The file is replaced
// whole (written beside it, then renamed), so that a broker reading it
// never sees half of it.
func Set(path, name, password string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if password == "" {
		return errors.New("empty password")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return fmt.Errorf("hashing the password: %w", err) // bcrypt's errors hold no password (too long: over 72 bytes)
	}
	lines, err := lines(path, true)
	if err != nil {
		return err
	}
	entry := name + ":" + string(hash)
	if i := find(lines, name); i >= 0 {
		lines[i] = entry
	} else {
		lines = append(lines, entry)
	}
	return write(path, lines)
}

// Remove removes the user name from the users file at path. It reports
// whether the user was there.
func Remove(path, name string) (bool, error) {
	lines, err := lines(path, false)
	if err != nil {
		return false, err
	}
	i := find(lines, name)
	if i < 0 {
		return false, nil
	}
	return true, write(path, append(lines[:i], lines[i+1:]...))
}

// lines reads the users file's lines, checking it parses; a missing file
// is no lines when missingOK.
func lines(path string, missingOK bool) ([]string, error) {
	b, err := readFile(path)
	if errors.Is(err, os.ErrNotExist) && missingOK {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := parse(path, b); err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// find returns the index of name's line, or -1.
func find(lines []string, name string) int {
	for i, l := range lines {
		if n, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && n == name {
			return i
		}
	}
	return -1
}

// write replaces the file at path with lines, keeping an existing file's
// mode (0600 for a new one).
func write(path string, lines []string) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	content := strings.Join(lines, "\n")
	if content != "" {
		content += "\n"
	}
	if _, err := tmp.WriteString(content); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("users file: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("users file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	return nil
}
