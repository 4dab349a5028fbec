package plugins

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cmdhost/cmdhost/internal/regfile"
)

// The plugins folder's rules, in one place for the manager (which files
// it serves), its admin operations and `cmdhost plugin install` (which
// names it may write): NAME.wasm is the plugin NAME, NAME.json its
// operator file; dotfiles are skipped (installers write their temporary
// files as dotfiles); only regular files, or symlinks to one wherever
// they point, are read (internal/regfile): a FIFO, a device or a socket
// is refused with an error naming it, and the other plugins load.

// MaxOperatorBytes bounds an operator file, as --max-module-size bounds a
// module: settings fit in a few KiB, and a file read whole without a
// bound (a symlink to /dev/zero) would take the host's memory.
const MaxOperatorBytes = 1 << 20

// MaxNameBytes bounds a plugin's name: it is a file name, a state
// namespace's and a label in logs, metrics and terminals.
const MaxNameBytes = 128

// CheckName refuses a plugin name that the host would never serve, or
// that would be unsafe as a file name and in a log line or a terminal:
// empty or longer than MaxNameBytes, starting with a dot (a dotfile,
// which the host skips), or holding anything but letters, digits, '.',
// '_', '-', '+' and '@' (so no path separator, no space, no control or
// format character such as a newline, an escape or a right-to-left
// override, no shell pattern such as '*').
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("a plugin name must not be empty: it is the NAME of a file NAME.wasm in the plugins folder")
	case len(name) > MaxNameBytes:
		return fmt.Errorf("invalid plugin name %.32q…: %d bytes, more than %d", name, len(name), MaxNameBytes)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("invalid plugin name %q: it is the NAME of a file NAME.wasm in the plugins folder, not a path; use a name without / or \\", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("invalid plugin name %q: the host skips dotfiles in the plugins folder and would never serve it; use a name that does not start with a dot", name)
	case !utf8.ValidString(name):
		return fmt.Errorf("invalid plugin name %q: not UTF-8", name)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-+@", r) {
			return fmt.Errorf("invalid plugin name %q: %q is not allowed; use letters, digits, '.', '_', '-', '+' and '@'", name, r)
		}
	}
	return nil
}

// pluginName returns the plugin name of a file name (base name), and
// whether the file is a plugin at all: NAME.wasm with a name CheckName
// allows.
func pluginName(file string) (string, bool) {
	name, ok := strings.CutSuffix(file, ".wasm")
	if !ok || CheckName(name) != nil {
		return "", false
	}
	return name, true
}

// operatorName returns the plugin name of an operator file name (base
// name), and whether it is one: NAME.json with a name CheckName allows.
func operatorName(file string) (string, bool) {
	name, ok := strings.CutSuffix(file, OperatorExt)
	if !ok || CheckName(name) != nil {
		return "", false
	}
	return name, true
}

// checkName refuses names that are no plugin file's (CheckName).
func checkName(name string) error { return CheckName(name) }

// readOperatorFile reads the operator file at path: a regular file of at
// most MaxOperatorBytes. A missing file is an error wrapping
// fs.ErrNotExist.
func readOperatorFile(path string) ([]byte, error) {
	b, err := regfile.Read(path, MaxOperatorBytes)
	if tooLarge := (*regfile.TooLargeError)(nil); errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%s: the operator file is %d bytes, more than the limit of %d (1 MiB): it holds a plugin's settings; make it smaller", path, tooLarge.Size, tooLarge.Max)
	}
	return b, err
}
