package servecmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host"
)

// Where a request's verified caller comes from (docs/security.md "Who is
// calling"): on the embedded broker, the connection it authenticated,
// always; with --broker, only when --trust-broker-identity says that the
// broker is another cmdhost's embedded broker, which stamps that
// identity on each request and removes any a client forged. Any other
// broker passes a client's user properties through as they came: there
// the host knows no verified caller, unless --caller-topic-token says that
// the broker's ACL ties a request topic level to the publisher's user
// name (mosquitto's `pattern write rpc/ID/+/%u`).

func identityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "caller-topic-token", Usage: "the --broker's ACL lets each user publish only where the request topic level {`NAME`} is its own user name (mosquitto: pattern write rpc/ID/+/%u): that level of a command's pattern (e.g. rpc/{executorId}/{commandName}/{caller}) is then the request's verified caller. Only on a broker whose ACL does so (docs/security.md)", EnvVars: []string{"CMDHOST_CALLER_TOPIC_TOKEN"}},
		&cli.BoolFlag{Name: "trust-broker-identity", Usage: "the --broker is another cmdhost's embedded broker: take each request's verified caller (user, client id) from the identity that broker stamps on it. Never on any other broker: there a client could write that identity itself", EnvVars: []string{"CMDHOST_TRUST_BROKER_IDENTITY"}},
	}
}

// identitySettings reads the identity flags into cfg.
func identitySettings(c *cli.Context, cfg *host.Config) error {
	cfg.Callers.TrustBrokerIdentity, cfg.Callers.TopicToken = c.Bool("trust-broker-identity"), c.String("caller-topic-token")
	switch tok := cfg.Callers.TopicToken; {
	case cfg.Callers.TrustBrokerIdentity && cfg.Broker.URL == nil:
		return errors.New("--trust-broker-identity is for a replica on another cmdhost's embedded broker (--broker URL): the embedded broker's identity is always trusted")
	case tok != "" && cfg.Broker.URL == nil:
		return errors.New("--caller-topic-token is for an external broker whose ACL ties that topic level to the user (--broker URL): the embedded broker knows its callers itself")
	case tok != "" && cfg.Callers.TrustBrokerIdentity:
		return errors.New("--caller-topic-token and --trust-broker-identity name two sources of the caller: keep the one that fits the broker")
	case tok == "executorId" || tok == "commandName" || !validTokenName(tok):
		return fmt.Errorf("--caller-topic-token %q: give the name of a {token} level of your commands' topic pattern, such as caller (not executorId or commandName)", tok)
	}
	return nil
}

// validTokenName reports whether name may be a topic token's name: ""
// (none), or letters, digits, - and _.
func validTokenName(name string) bool {
	return !strings.ContainsFunc(name, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}
