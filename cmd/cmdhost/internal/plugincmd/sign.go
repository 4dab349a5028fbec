package plugincmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/regfile"
	"github.com/cmdhost/cmdhost/internal/signing"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func signCommand() *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign a module file with an Ed25519 key: writes FILE.sig, which hosts with serve --trust check",
		ArgsUsage: "FILE.wasm",
		Description: "The signature is Ed25519 over the text \"sha256:\" and the module's hex digest,\n" +
			"written to FILE.wasm.sig in base64 (docs/fleet.md, \"Signatures and pins\"). The\n" +
			"key is a PEM PKCS #8 Ed25519 private key (cmdhost plugin keygen, or openssl\n" +
			"genpkey -algorithm ed25519). plugin install sends or copies FILE.wasm.sig with\n" +
			"the module.",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "key", Usage: "private key `FILE` (PEM, Ed25519)", Required: true, EnvVars: []string{"CMDHOST_SIGNING_KEY"}}},
		Action: runSign,
	}
}

func runSign(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("sign needs one module file: cmdhost plugin sign FILE.wasm --key KEY", base.ExitUsage)
	}
	key, err := signing.ReadPrivateKey(c.String("key"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("--key: %v", err), base.ExitUsage)
	}
	src := c.Args().First()
	bin, err := os.ReadFile(src)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	out := src + signing.Ext
	if err := os.WriteFile(out, signing.Sign(key, bin), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "signed %s: %s\n", src, out)
	return nil
}

func keygenCommand() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "make an Ed25519 key pair for plugin sign: KEY (private, mode 0600) and KEY.pub (for serve --trust)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "out", Usage: "private key `FILE` to write (the public key goes to FILE.pub)", Required: true}},
		Action: func(c *cli.Context) error {
			out := c.String("out")
			if _, err := os.Stat(out); err == nil {
				return cli.Exit(fmt.Sprintf("--out %s exists: keygen does not overwrite a key", out), base.ExitUsage)
			}
			priv, pub, err := signing.GenerateKey()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, priv, 0o600); err != nil {
				return cli.Exit(err, base.ExitUsage)
			}
			if err := os.WriteFile(out+".pub", pub, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "private key %s (keep it secret), public key %s.pub (serve --trust %s.pub)\n", out, out, out)
			return nil
		},
	}
}

// moduleSignature reads the signature file beside the module file src
// (src.sig); nil when there is none.
func moduleSignature(src string) ([]byte, error) {
	b, err := regfile.Read(src+signing.Ext, signing.MaxSignatureFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("the module's signature: %v", err), base.ExitUsage)
	}
	return b, nil
}

// signatureName is the signature file of plugin name in a plugins folder.
func signatureName(name string) string { return name + pluginmgr.SignatureExt }
