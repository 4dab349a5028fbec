package hostconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/session"
)

// How every command that connects to a broker logs in to a secured one:
// one set of flags (serve, invoke, watch, the plugin subcommands that ask
// a host, version --executor), read in one place into an
// admin.BrokerAuth, and the errors of a connection refused for who the
// client is, with their exit status.

// passwordEnv is the environment variable that may hold the broker
// password itself; --password-file names a file holding it. Never a flag
// with the password as its value: that would show in process listings.
const passwordEnv = "CMDHOST_PASSWORD"

// ExitRefused is the exit status of a connection refused for who the
// client is: the broker refused its credentials (bad user name or
// password, not authorized), or a TLS certificate was refused on either
// side (docs/cli.md "Exit status").
const ExitRefused = 7

// AuthFlags are the flags of a secured broker, the same for every
// command that connects (and the same keys in serve's --config file).
func AuthFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-ca", Usage: "PEM `FILE` of the CA that signs the broker's certificate (a private CA); default: the system's roots. Needs an mqtts:// --broker", EnvVars: []string{"CMDHOST_TLS_CA"}},
		&cli.StringFlag{Name: "tls-cert", Usage: "PEM `FILE` of the client certificate shown to a broker that asks for one (mTLS), with --tls-key; re-read at each connection", EnvVars: []string{"CMDHOST_TLS_CERT"}},
		&cli.StringFlag{Name: "tls-key", Usage: "PEM `FILE` of the client certificate's private key (with --tls-cert)", EnvVars: []string{"CMDHOST_TLS_KEY"}},
		&cli.StringFlag{Name: "tls-server-name", Usage: "`NAME` the broker's certificate must be valid for (default: --broker's host)", EnvVars: []string{"CMDHOST_TLS_SERVER_NAME"}},
		&cli.StringFlag{Name: "username", Usage: "user `NAME` to log in to the broker with (or mqtt://NAME@host in --broker)", EnvVars: []string{"CMDHOST_USERNAME"}},
		&cli.StringFlag{Name: "sat-file", Usage: "`FILE` holding a Kubernetes service account token to log in with (MQTT v5 authentication method K8S-SAT, as the Azure IoT Operations broker wants); watched: a new token is sent on the live connection (AUTH), without reconnecting", EnvVars: []string{"CMDHOST_SAT_FILE"}},
		&cli.StringFlag{Name: "password-file", Usage: "`FILE` holding the broker password (a trailing newline is dropped), re-read at each connection; or the password itself in " + passwordEnv + ", never a flag", EnvVars: []string{"CMDHOST_PASSWORD_FILE"}},
	}
}

// brokerAuth reads the auth flags of c, and checks them against the
// broker URL u and the files they name: a usage error (exit 2) names the
// flag to fix.
func brokerAuth(c *cli.Context, u *url.URL) (admin.BrokerAuth, error) {
	a := admin.BrokerAuth{
		CAFile: c.String("tls-ca"), CertFile: c.String("tls-cert"), KeyFile: c.String("tls-key"),
		ServerName: c.String("tls-server-name"), Username: c.String("username"), PasswordFile: c.String("password-file"),
		TokenFile: c.String("sat-file"),
	}
	if _, set := os.LookupEnv(passwordEnv); set && a.PasswordFile == "" && a.TokenFile == "" {
		a.PasswordEnv = passwordEnv
	}
	usage := func(msg string) (admin.BrokerAuth, error) { return a, cli.Exit(msg, base.ExitUsage) }
	tls := strings.EqualFold(u.Scheme, "mqtts") || strings.EqualFold(u.Scheme, "tls") || strings.EqualFold(u.Scheme, "ssl")
	switch {
	case (a.CertFile == "") != (a.KeyFile == ""):
		return usage("--tls-cert and --tls-key go together: the client certificate and its private key")
	case !tls && (a.CAFile != "" || a.CertFile != "" || a.ServerName != ""):
		return usage(fmt.Sprintf("--tls-* flags need a TLS broker URL: --broker %s is plain TCP; use mqtts://%s", u.Redacted(), u.Host))
	case a.TokenFile != "" && a.PasswordFile != "":
		return usage("--sat-file and --password-file are two ways of logging in: give one")
	case u.User != nil && a.Username != "" && u.User.Username() != a.Username:
		return usage(fmt.Sprintf("--broker names user %q and --username %q: give one", u.User.Username(), a.Username))
	}
	if err := a.Check(); err != nil {
		return usage(fmt.Sprintf("%v (--tls-ca, --tls-cert, --tls-key, --password-file, --sat-file or %s)", err, passwordEnv))
	}
	return a, nil
}

// ConnectError is the exit of a client that could not connect to the
// broker: exitRefused when it was refused for who it is (with what to
// fix), exitNoBroker when nothing answers there or its name does not
// resolve.
func ConnectError(err error) error {
	switch {
	case session.Refused(err):
		return cli.Exit(fmt.Sprintf("%v\n%s", err, RefusalHint(err)), ExitRefused)
	case session.NoSuchHost(err):
		return cli.Exit(fmt.Sprintf("%v (is --broker's host name right?)", err), base.ExitNoBroker)
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded):
		return cli.Exit(err, base.ExitNoBroker)
	}
	return err
}

// satRefusal reports whether err is a refusal of a K8S-SAT login.
func satRefusal(err error) bool {
	var refused *session.RefusedError
	return errors.As(err, &refused) && refused.Method == session.SATMethod
}

// RefusalHint says which flags fix a refused connection.
func RefusalHint(err error) string {
	var refused *session.RefusedError
	if errors.As(err, &refused) {
		if satRefusal(err) {
			return "the broker refused the service account token of --sat-file: check that it is not expired, is made for the broker's audience and is signed by the issuer the broker trusts"
		}
		return "check --username and --password-file (or " + passwordEnv + "), or the broker's users and ACLs; a client certificate the broker maps to a user: --tls-cert, --tls-key"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unknown authority"):
		return "the broker's certificate is signed by a CA this client does not trust: give that CA with --tls-ca FILE"
	case strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "doesn't contain any IP SANs"):
		return "the broker's certificate is not valid for --broker's host: connect by a name it is valid for, or give that name with --tls-server-name"
	case strings.Contains(msg, "remote error"):
		return "the broker refused this client's certificate (or its lack of one): give one it trusts with --tls-cert FILE --tls-key FILE"
	}
	return "check --tls-ca, --tls-cert, --tls-key and --tls-server-name"
}
