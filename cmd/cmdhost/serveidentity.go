package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host"
)

// Where a request's verified caller comes from (docs/security.md "Who is
// calling"): on the embedded broker, the connection it authenticated,
// always; with --broker, only when --trust-broker-identity says that the
// broker is another cmdhost's embedded broker, which stamps that
// identity on each request and removes any a client forged. Any other
// broker passes a client's user properties through as they came: there
// the host knows no verified caller.

func identityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "trust-broker-identity", Usage: "the --broker is another cmdhost's embedded broker: take each request's verified caller (user, client id) from the identity that broker stamps on it. Never on any other broker: there a client could write that identity itself", EnvVars: []string{"CMDHOST_TRUST_BROKER_IDENTITY"}},
	}
}

// identitySettings reads the identity flags into cfg.
func identitySettings(c *cli.Context, cfg *host.Config) error {
	cfg.TrustBrokerIdentity = c.Bool("trust-broker-identity")
	if cfg.TrustBrokerIdentity && cfg.Broker == nil {
		return errors.New("--trust-broker-identity is for a replica on another cmdhost's embedded broker (--broker URL): the embedded broker's identity is always trusted")
	}
	return nil
}
