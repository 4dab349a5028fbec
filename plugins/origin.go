package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cmdhost/cmdhost/internal/regfile"
	"github.com/cmdhost/cmdhost/internal/signing"
)

// A module's origin is checked before it is loaded, at every load and
// reload: the digest its operator file pins ("digest"), and, when the
// manager trusts keys (Config.Trust), its signature, NAME.wasm.sig beside
// it in the folder (internal/signing has the format). A module that fails
// either is refused as one that does not load: the version serving goes
// on, and LastError says why.

// SignatureExt is the extension of a module's signature file:
// NAME.wasm.sig (cmdhost plugin sign writes it beside the module).
const SignatureExt = ".wasm" + signing.Ext

// checkOrigin refuses the module of hex digest for plugin name when op
// pins another digest, or when the manager trusts keys and sig (the
// signature file's content; nil when there is none) is not by one of
// them.
func (m *Manager) checkOrigin(name, digest string, op *Operator, sig []byte) error {
	if err := CheckPin(name, digest, op); err != nil {
		return err
	}
	if len(m.cfg.Trust) == 0 {
		return nil
	}
	if sig == nil {
		return fmt.Errorf("plugin %s: the module is not signed (no %s%s) and this host serves only modules signed by a key it trusts (serve --trust): sign it (cmdhost plugin sign FILE --key KEY) and install it with its signature", name, name, SignatureExt)
	}
	if err := signing.Verify(m.cfg.Trust, digest, sig); err != nil {
		return fmt.Errorf("plugin %s: %s%s: %w (serve --trust); sign it with a trusted key", name, name, SignatureExt, err)
	}
	return nil
}

// CheckPin refuses the module of hex digest for plugin name when op, its
// operator file (nil: none), pins another digest: the host's rule, for a
// client that fetches a module too (cmdhost plugin pull).
func CheckPin(name, digest string, op *Operator) error {
	if op != nil && op.Digest != "" && op.Digest != "sha256:"+digest {
		return fmt.Errorf("plugin %s: the module is sha256:%s, not the %s its operator file %s pins (\"digest\"): install the module pinned, or change the pin", name, digest, op.Digest, op.File)
	}
	return nil
}

// sigPath is the path of the plugin's signature file.
func (m *Manager) sigPath(name string) string { return m.path(name) + signing.Ext }

// readSignature reads the plugin's signature file; nil when there is none.
func readSignature(path string) ([]byte, error) {
	b, err := regfile.Read(path, signing.MaxSignatureFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// placeSignature makes the plugin's signature file hold sig (nil: no
// file), written to a temporary dotfile and renamed into place.
func (m *Manager) placeSignature(dir, path string, sig []byte) error {
	if sig == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	tmp, err := writeTemp(dir, ".sig.*.tmp", sig)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
