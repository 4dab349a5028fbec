package plugincmd

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/signing"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// plugin pull fetches a module as an install from a registry does and
// writes it to a file, checked as a host would check it before loading:
// the digest its operator file pins, and with --trust its signature.
// Whether it loads is plugin validate's or inspect's (both take oci://
// too), so that a module a host refuses can still be fetched and looked at.

func pullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "pull a module from an OCI registry into a file, its digest and signature checked as a host checks them",
		ArgsUsage: "oci://REGISTRY/REPO[:TAG|@sha256:…]",
		Description: "Fetches the module as plugin install oci://… does (by tag, default latest, or\n" +
			"by the manifest's digest; the layer checked against its digest and size) and\n" +
			"writes it to --output (default NAME.wasm here, NAME the repository's last\n" +
			"element), the signature the artifact carries beside it as FILE.sig. Before\n" +
			"anything is written: an operator file beside the output (NAME.json) that pins\n" +
			"another digest refuses it, and with --trust the module must be signed by one\n" +
			"of the keys, as on a host with serve --trust. Exit status 1 when refused.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`FILE` to write the module to (default: NAME.wasm in the current folder)"},
			&cli.StringSliceFlag{Name: "trust", Usage: "Ed25519 public key `FILE` (PEM, serve --trust's; repeatable): the module must be signed by one of them"},
		}, registry.RegistryFlags()...),
		Action: runPull,
	}
}

func runPull(c *cli.Context) error {
	if c.NArg() != 1 || !strings.HasPrefix(c.Args().First(), oci.Scheme) {
		return cli.Exit("pull needs one oci:// reference: cmdhost plugin pull oci://REGISTRY/REPO:TAG [-o FILE]", base.ExitUsage)
	}
	ref := c.Args().First()
	var trust []ed25519.PublicKey
	for _, f := range c.StringSlice("trust") {
		k, err := signing.ReadPublicKey(f)
		if err != nil {
			return cli.Exit(fmt.Sprintf("--trust: %v", err), base.ExitUsage)
		}
		trust = append(trust, k)
	}
	out := c.String("output")
	if out == "" {
		out = registry.RepositoryName(ref) + ".wasm"
	}
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return cli.Exit(fmt.Sprintf("--output %s: %s is not a directory", out, filepath.Dir(out)), base.ExitUsage)
	}
	name := base.PluginName(out)
	op, err := pluginmgr.ReadOperator(strings.TrimSuffix(out, filepath.Ext(out)) + pluginmgr.OperatorExt)
	if err != nil {
		return cli.Exit(fmt.Sprintf("operator file beside --output: %v", err), base.ExitUsage)
	}
	pulled, err := registry.Pull(c, ref)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(pulled.Module)
	digest := hex.EncodeToString(sum[:])
	if err := pluginmgr.CheckPin(name, digest, op); err != nil {
		return cli.Exit("not written: "+err.Error(), base.ExitFailed)
	}
	signed := "none"
	switch {
	case len(trust) > 0 && pulled.Signature == nil:
		return cli.Exit(fmt.Sprintf("not written: the module of %s is not signed (the artifact has no signature layer), and --trust asks for a signature by one of its keys", ref), base.ExitFailed)
	case len(trust) > 0:
		if err := signing.Verify(trust, digest, pulled.Signature); err != nil {
			return cli.Exit(fmt.Sprintf("not written: the signature of %s: %v (--trust)", ref, err), base.ExitFailed)
		}
		signed = out + signing.Ext + ", by a key of --trust"
	case pulled.Signature != nil:
		signed = out + signing.Ext + ", not checked (--trust KEY.pub checks it)"
	}
	if err := writePulled(out, pulled); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "pulled %s to %s\nmodule    sha256:%s (%d bytes)\nmanifest  %s\nsignature %s\n",
		ref, out, digest, len(pulled.Module), pulled.Manifest, signed)
	return nil
}

// writePulled writes the pulled module to path and its signature to
// path.sig (none: a signature there, another module's, goes), each to a
// temporary file renamed into place; the signature first, as install
// places them.
func writePulled(path string, pulled oci.Pulled) error {
	sigPath := path + signing.Ext
	if pulled.Signature == nil {
		if err := os.Remove(sigPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else if err := writeFileAtomic(sigPath, pulled.Signature); err != nil {
		return err
	}
	return writeFileAtomic(path, pulled.Module)
}

// writeFileAtomic writes b to path through a temporary file in its
// folder, renamed into place (mode 0644).
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
