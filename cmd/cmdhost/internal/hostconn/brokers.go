package hostconn

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
)

// --broker given more than once: the brokers of one cluster, tried in
// turn (session.Config.Failover): the first at each round of connection
// attempts, then the next while one cannot be reached or refuses; a
// client that gives up (invoke, plugin, watch) does so only when every
// one failed. CMDHOST_BROKER may hold several, comma-separated.

// BrokersFlag is the --broker flag of a command that connects, with def
// as its default (none: no default).
func BrokersFlag(usage string, def ...string) cli.Flag {
	f := &cli.StringSliceFlag{Name: "broker", Usage: usage + "; again for another broker of the cluster, tried in turn when the one before cannot be reached",
		EnvVars: []string{"CMDHOST_BROKER"}}
	if len(def) > 0 {
		f.Value = cli.NewStringSlice(def...)
	}
	return f
}

// BrokerURLs parses the --broker values of c (at least one: the flag's
// default otherwise).
func BrokerURLs(c *cli.Context) ([]*url.URL, error) {
	raw := c.StringSlice("broker")
	if len(raw) == 0 {
		return nil, fmt.Errorf("--broker: want a URL such as mqtt://%s", DefaultListen)
	}
	us := make([]*url.URL, 0, len(raw))
	for _, r := range raw {
		u, err := brokerURL(strings.TrimSpace(r))
		if err != nil {
			return nil, err
		}
		us = append(us, u)
	}
	return us, nil
}

// BrokersAuth reads the auth flags of c (brokerAuth), checked against
// each broker: one set of credentials logs in to all of them.
func BrokersAuth(c *cli.Context, us []*url.URL) (admin.BrokerAuth, error) {
	var a admin.BrokerAuth
	for i, u := range us {
		b, err := brokerAuth(c, u)
		if err != nil {
			return b, err
		}
		if i == 0 {
			a = b
		} else if isTLSURL(u) != isTLSURL(us[0]) {
			return a, cli.Exit(fmt.Sprintf("--broker %s and --broker %s: one is TLS and the other not; the brokers of a cluster take one scheme", us[0].Redacted(), u.Redacted()), base.ExitUsage)
		}
	}
	return a, nil
}

// isTLSURL reports whether u's scheme asks for TLS.
func isTLSURL(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, "mqtts") || strings.EqualFold(u.Scheme, "tls") || strings.EqualFold(u.Scheme, "ssl")
}
