package plugincmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/internal/oci"
)

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "validate a module file and push it to an OCI registry as a Wasm OCI artifact",
		ArgsUsage: "FILE.wasm REGISTRY/REPO[:TAG]",
		Description: "The module is loaded as the host would first: one it would refuse is not pushed.\n" +
			"It goes in the CNCF Wasm OCI artifact layout (config " + oci.ConfigMediaType + ",\n" +
			"one layer " + oci.LayerMediaType + "), tagged TAG (default latest); push prints the\n" +
			"reference by digest, REGISTRY/REPO@sha256:…, which pins this version:\n" +
			"cmdhost plugin install oci://REGISTRY/REPO@sha256:… installs it.",
		Flags:  registry.RegistryFlags(),
		Action: runPush,
	}
}

func runPush(c *cli.Context) error {
	if c.NArg() != 2 {
		return cli.Exit("push needs a module file and a reference: cmdhost plugin push FILE.wasm REGISTRY/REPO:TAG", base.ExitUsage)
	}
	src, ref := c.Args().Get(0), strings.TrimPrefix(c.Args().Get(1), oci.Scheme)
	cfg, err := registry.RegistryConfig(c)
	if err != nil {
		return err
	}
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(c.Context)
	if v := validateFile(c, e, src); !v.OK {
		return cli.Exit(fmt.Sprintf("not pushed: %s: %s", src, v.Error), base.ExitFailed)
	}
	bin, err := os.ReadFile(src)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	sig, err := moduleSignature(src)
	if err != nil {
		return err
	}
	pushed, err := oci.Push(c.Context, ref, bin, sig, cfg)
	if err != nil {
		return cli.Exit(err, base.ExitFailed)
	}
	signed := ""
	if sig != nil {
		signed = " with its signature " + src + ".sig"
	}
	fmt.Fprintf(c.App.Writer, "pushed %s%s to %s\nmodule   %s\nmanifest %s\npinned   %s%s\n", src, signed, ref, pushed.Module, pushed.Manifest, oci.Scheme, pushed.Reference)
	return nil
}
