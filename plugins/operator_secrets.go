package plugins

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/internal/regfile"
)

// The operator file's "secrets": values a handler needs that must not be
// written in the operator file, nor in the module (an API key, a token),
// each read by the host from a file the operator names:
//
//	"secrets": {"apiKey": "/etc/cmdhost/secrets/pay-api-key"}
//
// The host reads each file when it loads the plugin and gives its content
// to the guest as the config value of that name (config_get), as "config"
// does: the guest reads the value, never the file, nor any other file.
// Why a file: it can be kept closed to everyone but the host's user, and
// be written by a secret manager (a Kubernetes secret's volume, systemd's
// LoadCredential), while the operator file is shown and copied around.
//
// A value is never logged nor shown: Secret's String, GoString and JSON
// name its file. A missing, unreadable, empty or oversized file refuses
// the plugin at load with an OperatorError naming the field and the file.

// MaxSecretBytes bounds a secret file: a key or a token, not a document.
const MaxSecretBytes = 64 << 10

// maxSecrets bounds the secrets of one operator file.
const maxSecrets = 64

// Secret is a value the host read from a file the operator file names
// ("secrets"), given to the guest as a config value. Its content is kept
// unexported and out of every way of printing it.
type Secret struct {
	// File is the secret file's path.
	File  string
	value string
}

// Value is the secret's content, for the guest's config.
func (s Secret) Value() string { return s.value }

// String names the secret's file, never its content.
func (s Secret) String() string { return "secret from " + s.File }

// GoString is String: %#v shows no content either.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON writes the secret's file, never its content.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]string{"file": s.File}) }

// SecretNames are the names of op's secrets, sorted; none without a file.
func (op *Operator) SecretNames() []string {
	if op == nil {
		return nil
	}
	names := make([]string, 0, len(op.Secrets))
	for n := range op.Secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// secrets reads "secrets": an object of names and absolute file paths;
// each file is read now (regfile.Read: a regular file of at most
// MaxSecretBytes), and one final line break dropped (echo KEY > file
// writes one).
func (p *opParser) secrets(raw json.RawMessage, at string) (map[string]Secret, error) {
	paths, err := p.strMap(raw, at, func(where, key string) error {
		if key == "" || strings.ContainsRune(key, 0) {
			return p.errf(where, "is not a name: give the config name the handler reads, e.g. \"apiKey\"")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(paths) > maxSecrets {
		return nil, p.errf(at, "names %d secrets, more than the limit of %d", len(paths), maxSecrets)
	}
	names := make([]string, 0, len(paths))
	for n := range paths {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make(map[string]Secret, len(paths))
	for _, name := range names {
		where, file := join(at, name), paths[name]
		if !filepath.IsAbs(file) {
			return nil, p.errf(where, "%q is not an absolute path: write the secret file's full path, e.g. \"/etc/cmdhost/secrets/%s\"", file, name)
		}
		b, err := regfile.Read(file, MaxSecretBytes)
		var tooLarge *regfile.TooLargeError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, p.errf(where, "the secret file %s does not exist: create it (the host reads it at load), or fix the path", file)
		case errors.Is(err, fs.ErrPermission):
			return nil, p.errf(where, "the secret file %s cannot be read: permission denied: make it readable by the user the host runs as", file)
		case errors.As(err, &tooLarge):
			return nil, p.errf(where, "the secret file %s is %d bytes, more than the limit of %d (64 KiB): a secret is a key or a token", file, tooLarge.Size, tooLarge.Max)
		case errors.Is(err, regfile.ErrNotRegular):
			return nil, p.errf(where, "the secret file %s is not a regular file: put the secret in a regular file (or a symlink to one)", file)
		case err != nil:
			return nil, p.errf(where, "the secret file %s cannot be read: %v", file, unwrapPath(err))
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		switch {
		case v == "":
			return nil, p.errf(where, "the secret file %s is empty: write the secret into it", file)
		case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
			return nil, p.errf(where, "the secret file %s holds bytes that are not UTF-8 text: a config value is text (encode a binary secret, e.g. in base64)", file)
		}
		out[name] = Secret{File: file, value: v}
	}
	return out, nil
}

// unwrapPath is err without the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkSecretNames refuses a name given both in "config" and in
// "secrets": the value would have two sources.
func (p *opParser) checkSecretNames(op *Operator) error {
	for _, name := range op.SecretNames() {
		if _, dup := op.Config[name]; dup {
			return p.errf("secrets."+name, "is also in \"config\": give the value one place (a secret in \"secrets\", the rest in \"config\")")
		}
	}
	return nil
}

// configWithSecrets is op's config values with its secrets' values
// added; nil when it has neither.
func (op *Operator) configWithSecrets() map[string]string {
	if op.Config == nil && op.Secrets == nil {
		return nil
	}
	out := make(map[string]string, len(op.Config)+len(op.Secrets))
	for k, v := range op.Config {
		out[k] = v
	}
	for k, s := range op.Secrets {
		out[k] = s.value
	}
	return out
}
