package servecmd

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/secret"
)

func secretFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "a Redis `URL`: redis://[USER@]HOST:PORT/DB or rediss:// over TLS, redis+sentinel://[USER@]HOST:PORT[,HOST:PORT…]/MASTER[/DB] (Sentinel: follows failovers) or redis-cluster://[USER@]HOST:PORT[,HOST:PORT…] (Redis Cluster), holding the dedup store, the reuse cache and the handlers' state, shared by replicas and restarts: a request is answered once across them, even after a kill -9, its state writes committed with its reply, and reusable replies are reused by all (see docs/operations.md); USER is a Redis ACL user, its password is not in the URL (--store-password-file); none: both in memory", EnvVars: []string{"CMDHOST_STORE"}},
		&cli.StringFlag{Name: "store-ca", Usage: "PEM `FILE` of the CAs that sign a rediss:// store's certificate; none: the system's", EnvVars: []string{"CMDHOST_STORE_CA"}},
		&cli.StringFlag{Name: "store-cert", Usage: "client certificate PEM `FILE` for a rediss:// store that asks for one (with --store-key), re-read at each new connection", EnvVars: []string{"CMDHOST_STORE_CERT"}},
		&cli.StringFlag{Name: "store-key", Usage: "the key PEM `FILE` of --store-cert", EnvVars: []string{"CMDHOST_STORE_KEY"}},
		&cli.StringFlag{Name: "store-password-file", Usage: "`FILE` holding the password of the --store URL's user (or of Redis's default user), re-read at each new connection; or the variable " + hostconn.EnvStorePassword, EnvVars: []string{"CMDHOST_STORE_PASSWORD_FILE"}},
		&cli.StringFlag{Name: "admin-token-file", Usage: "`FILE` holding the token that allows the admin ops that change state (reload, remove), re-read at each of them; or the variable " + hostconn.EnvAdminToken + "; none: those ops are refused", EnvVars: []string{"CMDHOST_ADMIN_TOKEN_FILE"}},
		&cli.StringFlag{Name: "admin-token", Usage: "the admin token itself: shown by ps, kept for compatibility (a warning says so); use --admin-token-file"},
	}
}

// secretSettings reads the store and admin token flags into cfg: a
// --store URL without a password (its password from a file or the
// environment), TLS files that exist, a token from one place.
func secretSettings(c *cli.Context, cfg *host.Config) error {
	cfg.Store.URL = c.String("store")
	cfg.Store.CAFile, cfg.Store.CertFile, cfg.Store.KeyFile = c.String("store-ca"), c.String("store-cert"), c.String("store-key")
	cfg.Store.PasswordFile, cfg.Store.Password = c.String("store-password-file"), os.Getenv(hostconn.EnvStorePassword)
	if err := checkStore(cfg); err != nil {
		return err
	}
	cfg.Admin.TokenFile, cfg.Admin.Token = c.String("admin-token-file"), c.String("admin-token")
	switch {
	case cfg.Admin.TokenFile != "" && cfg.Admin.Token != "":
		return errors.New("--admin-token-file and --admin-token both give the admin token: keep --admin-token-file")
	case cfg.Admin.TokenFile != "":
		if _, err := secret.ReadFile(cfg.Admin.TokenFile); err != nil {
			return fmt.Errorf("--admin-token-file: %w", err)
		}
	case cfg.Admin.Token == "":
		cfg.Admin.Token = os.Getenv(hostconn.EnvAdminToken)
	}
	return nil
}

// checkStore checks the --store settings of cfg; its errors show the URL
// without its password.
func checkStore(cfg *host.Config) error {
	if cfg.Store.URL == "" {
		if cfg.Store.CAFile != "" || cfg.Store.CertFile != "" || cfg.Store.KeyFile != "" || cfg.Store.PasswordFile != "" {
			return errors.New("--store-ca, --store-cert, --store-key and --store-password-file need --store rediss://HOST:PORT/DB")
		}
		return nil
	}
	u, err := url.Parse(cfg.Store.URL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--store %q: want a URL such as redis://127.0.0.1:6379/0, rediss://USER@HOST:6380/0, redis+sentinel://HOST:26379,HOST:26380/MASTER or redis-cluster://HOST:7000,HOST:7001", redact.String(cfg.Store.URL))
	}
	if _, ok := u.User.Password(); ok || strings.Contains(u.Path+u.RawQuery+u.Fragment, "@") {
		// An '@' past the host is a password holding '/', '?' or '#'
		// that the parser took for the host's port and a path.
		return fmt.Errorf("--store %s: a password in the URL shows wherever the URL does (ps, the config file, the log): remove it, and give it with --store-password-file FILE (or %s)",
			redact.URL(u), hostconn.EnvStorePassword)
	}
	if err := cache.CheckRedisURL(cfg.Store.URL); err != nil {
		return fmt.Errorf("--store %s: %w", redact.URL(u), err)
	}
	if !strings.HasPrefix(u.Scheme, "rediss") && (cfg.Store.CAFile != "" || cfg.Store.CertFile != "" || cfg.Store.KeyFile != "") {
		return fmt.Errorf("--store %s: --store-ca, --store-cert and --store-key are for TLS: use rediss://", redact.URL(u))
	}
	if (cfg.Store.CertFile == "") != (cfg.Store.KeyFile == "") {
		return errors.New("--store-cert and --store-key go together: give both, or neither")
	}
	for flag, file := range map[string]string{"--store-ca": cfg.Store.CAFile, "--store-cert": cfg.Store.CertFile, "--store-key": cfg.Store.KeyFile} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	if cfg.Store.PasswordFile != "" {
		if _, err := secret.ReadFile(cfg.Store.PasswordFile); err != nil {
			return fmt.Errorf("--store-password-file: %w", err)
		}
	}
	return nil
}
