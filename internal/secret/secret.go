// Package secret reads the host's secrets (the Redis password, the admin
// token) from the files the operator keeps them in. A secret given only
// as a flag's value would show in `ps`, so no flag carries one; the flags
// name the file (the CLI reads a secret's environment variable itself).
// Its errors name the file and what is wrong with it, never its content.
package secret

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxBytes bounds a secret file: a larger one is not a password or a
// token (a key, a log someone pointed the flag at), and is refused rather
// than read into memory.
const MaxBytes = 4096

// ReadFile returns the secret in the file path: its content less one
// trailing newline ("\n" or "\r\n"). It reads the file at each call, so
// that a caller that calls it at each use picks up a rotated file. An
// empty, multi-line or unreadable file, or one larger than MaxBytes, is
// an error that names the file and not its content.
func ReadFile(path string) (string, error) { return ReadFileMax(path, MaxBytes) }

// ReadFileMax is ReadFile with a file of at most maxBytes (a service
// account token may be larger than a password: session reads it up to
// what the broker accepts, jwt.MaxTokenBytes).
func ReadFileMax(path string, maxBytes int) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("secret file %s: not a regular file", path)
	}
	if st.Size() > int64(maxBytes) {
		return "", fmt.Errorf("secret file %s: %d bytes, more than %d: not a password or token", path, st.Size(), maxBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1)) // it may have grown since Stat
	switch {
	case err != nil:
		return "", fmt.Errorf("secret file %s: %w", path, err)
	case len(b) > maxBytes:
		return "", fmt.Errorf("secret file %s: more than %d bytes: not a password or token", path, maxBytes)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	if strings.ContainsAny(v, "\n\r") {
		return "", fmt.Errorf("secret file %s holds more than one line: write the secret alone on its line", path)
	}
	return v, nil
}
