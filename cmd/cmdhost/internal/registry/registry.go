package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/signing"
)

// RegistryFlags say how to reach an OCI registry: its credentials and
// whether it speaks plain HTTP.
func RegistryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "registry-config", Usage: "docker config `FILE` with the registry's credentials (docker login's; default: $DOCKER_CONFIG/config.json or ~/.docker/config.json when there is one)"},
		&cli.StringFlag{Name: "registry-user", Usage: "the registry's user `NAME`, with --registry-password-file", EnvVars: []string{"CMDHOST_REGISTRY_USER"}},
		&cli.StringFlag{Name: "registry-password-file", Usage: "`FILE` holding the registry user's password", EnvVars: []string{"CMDHOST_REGISTRY_PASSWORD_FILE"}},
		&cli.BoolFlag{Name: "plain-http", Usage: "talk HTTP to the registry, not HTTPS (a registry on loopback)"},
	}
}

// RegistryConfig reads the registry flags of c.
func RegistryConfig(c *cli.Context) (oci.Config, error) {
	cfg := oci.Config{DockerConfig: c.String("registry-config"), Username: c.String("registry-user"),
		PasswordFile: c.String("registry-password-file"), PlainHTTP: c.Bool("plain-http")}
	switch {
	case cfg.Username != "" && cfg.PasswordFile == "":
		return cfg, cli.Exit("--registry-user needs --registry-password-file FILE (the password is never a flag value)", base.ExitUsage)
	case cfg.PasswordFile != "" && cfg.Username == "":
		return cfg, cli.Exit("--registry-password-file needs --registry-user NAME", base.ExitUsage)
	case cfg.Username != "" && cfg.DockerConfig != "":
		return cfg, cli.Exit("--registry-config and --registry-user both give credentials: keep one", base.ExitUsage)
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

// PulledFile pulls the module of an oci:// reference into a file of a
// temporary folder, named after the repository (the plugin's default
// name), and returns its path and a function that removes it. A source
// that is no oci:// reference is returned as it is.
func PulledFile(c *cli.Context, src string) (path string, done func(), err error) {
	if !strings.HasPrefix(src, oci.Scheme) {
		return src, func() {}, nil
	}
	pulled, err := Pull(c, src)
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
