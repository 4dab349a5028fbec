package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/signing"
)

// registryFlags say how to reach an OCI registry: its credentials and
// whether it speaks plain HTTP.
func registryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "registry-config", Usage: "docker config `FILE` with the registry's credentials (docker login's; default: $DOCKER_CONFIG/config.json or ~/.docker/config.json when there is one)"},
		&cli.StringFlag{Name: "registry-user", Usage: "the registry's user `NAME`, with --registry-password-file", EnvVars: []string{"CMDHOST_REGISTRY_USER"}},
		&cli.StringFlag{Name: "registry-password-file", Usage: "`FILE` holding the registry user's password", EnvVars: []string{"CMDHOST_REGISTRY_PASSWORD_FILE"}},
		&cli.BoolFlag{Name: "plain-http", Usage: "talk HTTP to the registry, not HTTPS (a registry on loopback)"},
	}
}

// registryConfig reads the registry flags of c.
func registryConfig(c *cli.Context) (oci.Config, error) {
	cfg := oci.Config{DockerConfig: c.String("registry-config"), Username: c.String("registry-user"),
		PasswordFile: c.String("registry-password-file"), PlainHTTP: c.Bool("plain-http")}
	switch {
	case cfg.Username != "" && cfg.PasswordFile == "":
		return cfg, cli.Exit("--registry-user needs --registry-password-file FILE (the password is never a flag value)", exitUsage)
	case cfg.PasswordFile != "" && cfg.Username == "":
		return cfg, cli.Exit("--registry-password-file needs --registry-user NAME", exitUsage)
	case cfg.Username != "" && cfg.DockerConfig != "":
		return cfg, cli.Exit("--registry-config and --registry-user both give credentials: keep one", exitUsage)
	case cfg.Username == "" && cfg.DockerConfig == "":
		cfg.DockerConfig = defaultDockerConfig()
	}
	return cfg, nil
}

// defaultDockerConfig is docker's config file when there is one: in
// $DOCKER_CONFIG, else ~/.docker; "" when there is none.
func defaultDockerConfig() string {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".docker")
	}
	path := filepath.Join(dir, "config.json")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

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
		Flags:  registryFlags(),
		Action: runPush,
	}
}

func runPush(c *cli.Context) error {
	if c.NArg() != 2 {
		return cli.Exit("push needs a module file and a reference: cmdhost plugin push FILE.wasm REGISTRY/REPO:TAG", exitUsage)
	}
	src, ref := c.Args().Get(0), strings.TrimPrefix(c.Args().Get(1), oci.Scheme)
	cfg, err := registryConfig(c)
	if err != nil {
		return err
	}
	e, err := newEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(c.Context)
	if v := validateFile(c, e, src); !v.OK {
		return cli.Exit(fmt.Sprintf("not pushed: %s: %s", src, v.Error), exitFailed)
	}
	bin, err := os.ReadFile(src)
	if err != nil {
		return cli.Exit(err, exitUsage)
	}
	sig, err := moduleSignature(src)
	if err != nil {
		return err
	}
	pushed, err := oci.Push(c.Context, ref, bin, sig, cfg)
	if err != nil {
		return cli.Exit(err, exitFailed)
	}
	signed := ""
	if sig != nil {
		signed = " with its signature " + src + ".sig"
	}
	fmt.Fprintf(c.App.Writer, "pushed %s%s to %s\nmodule   %s\nmanifest %s\npinned   %s%s\n", src, signed, ref, pushed.Module, pushed.Manifest, oci.Scheme, pushed.Reference)
	return nil
}

// pulledFile pulls the module of an oci:// reference into a file of a
// temporary folder, named after the repository (the plugin's default
// name), and returns its path and a function that removes it. A source
// that is no oci:// reference is returned as it is.
func pulledFile(c *cli.Context, src string) (path string, done func(), err error) {
	if !strings.HasPrefix(src, oci.Scheme) {
		return src, func() {}, nil
	}
	pulled, err := pull(c, src)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "cmdhost-pull-")
	if err != nil {
		return "", nil, err
	}
	done = func() { _ = os.RemoveAll(dir) }
	path = filepath.Join(dir, pulled.Name+".wasm")
	if err := os.WriteFile(path, pulled.Module, 0o600); err != nil {
		done()
		return "", nil, err
	}
	if pulled.Signature != nil { // beside the module, as install reads it
		if err := os.WriteFile(path+signing.Ext, pulled.Signature, 0o600); err != nil {
			done()
			return "", nil, err
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "pulled %s (manifest %s)\n", src, pulled.Manifest)
	return path, done, nil
}
