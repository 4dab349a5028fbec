// Package secret reads the host's secrets (the Redis password, the admin
// token) from where the operator keeps them: a file, or an environment
// variable. A secret given only as a flag's value would show in `ps`,
// so no flag carries one; the flags name the file. What this package
// returns and reports never holds a secret's value: its errors name the
// file and what is wrong with it, never its content.
package secret

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// MaxBytes bounds a secret file: a larger one is not a password or a
// token (a key, a log someone pointed the flag at), and is refused rather
// than read into memory.
const MaxBytes = 4096

// Source is where one secret is read from: File if set, else the
// environment variable Env. Read reads it again at each call, so that a
// rotated file is picked up by the next use without a restart.
type Source struct {
	// File is the secret's file; its content less one trailing newline
	// is the secret.
	File string
	// Env names the environment variable read when File is "".
	Env string
}

// Set reports whether the source names a file, or an environment
// variable that is set.
func (s Source) Set() bool {
	if s.File != "" {
		return true
	}
	_, ok := os.LookupEnv(s.Env)
	return s.Env != "" && ok
}

// Read returns the secret: the file's content less one trailing newline
// ("\n" or "\r\n"), or the variable's value. An empty secret, a file
// that cannot be read or is larger than MaxBytes, is an error that names
// the file (or variable) and not the content.
func (s Source) Read() (string, error) {
	if s.File == "" {
		v, ok := os.LookupEnv(s.Env)
		switch {
		case s.Env == "" || !ok:
			return "", errors.New("no secret: name its file")
		case v == "":
			return "", fmt.Errorf("environment variable %s is empty", s.Env)
		}
		return v, nil
	}
	return ReadFile(s.File)
}

// ReadFile reads the secret in path (see Source.Read).
func ReadFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	if !st.Mode().IsRegular() && st.Mode()&os.ModeNamedPipe == 0 {
		return "", fmt.Errorf("secret file %s: not a regular file", path)
	}
	if st.Size() > MaxBytes {
		return "", fmt.Errorf("secret file %s: %d bytes, more than %d: not a password or token", path, st.Size(), MaxBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
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
