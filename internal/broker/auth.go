package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Who may connect over the network (the host's own clients, in process,
// always may):
//
//   - On the TLS listener with a client CA (Config.TLSClientCAFile), a
//     client must show a certificate that CA signed, or the handshake
//     fails; the certificate's common name is its user name (a user name
//     in its CONNECT must be the same, or CONNACK 0x86), and it needs no
//     password; naming an authentication method beside it is refused with
//     CONNACK 0x8C.
//   - Otherwise, with a users file (Config.UsersFile), a client must log
//     in as one of its users: without a user name it is refused with
//     CONNACK 0x87 (not authorized: it did not say who it is), with a
//     wrong user name or password with 0x86 (bad user name or password).
//   - A client that names an authentication method logs in with a
//     Kubernetes service account token (sat.go, Config.SATKeyFile); any
//     other method is refused with CONNACK 0x8C. With SATKeyFile and no
//     users file, a client without a token is refused with 0x87.
//   - Otherwise anyone may connect: the listener must then be on loopback,
//     or Config.AllowAnonymous must say that it is meant (CheckAccess).
//   - Password and token checks take turns, fairly across source
//     addresses, and an address that failed too many password logins is
//     refused without a check for a while, CONNACK 0x9F (logins.go,
//     throttle.go).
//
// Each refusal is logged with the client's address, client id and user
// name, never its password; rate-limited (a wrong password: five at once,
// then one a second), with the number left out.

// whyWrongPassword is authenticate's why when a password check failed.
const whyWrongPassword = "unknown user or wrong password"

// authenticate admits or refuses a client over the network: ok, or the
// CONNACK code and why.
func (g *guard) authenticate(cl *mqtt.Client, pk packets.Packet) (code packets.Code, why string, ok bool) {
	if cn, verified := peerCommonName(cl.Net.Conn); verified {
		if m := pk.Properties.AuthenticationMethod; m != "" {
			// Its certificate is how it logs in: a method named beside it
			// (K8S-SAT would have its token checked after the session is
			// up, and the client disconnected then) is refused now.
			return packets.ErrBadAuthenticationMethod, "authentication method " + strconvQuote(m) + " named by a client that logs in with its certificate", false
		}
		if name := string(pk.Connect.Username); name != "" && name != cn {
			return packets.ErrBadUsernameOrPassword, "the user name is not its certificate's common name (" + cn + ")", false
		}
		cl.Properties.Username = []byte(cn)
		return packets.CodeSuccess, "", true
	}
	if m := pk.Properties.AuthenticationMethod; m != "" {
		if g.sat == nil || m != SATMethod {
			return packets.ErrBadAuthenticationMethod, "authentication method " + strconvQuote(m) + " not accepted (K8S-SAT with --sat-key only)", false
		}
		return g.sat.login(cl, pk)
	}
	if g.users == nil {
		if g.sat != nil {
			return packets.ErrNotAuthorized, "no service account token: the broker admits clients that log in with one (K8S-SAT)", false
		}
		if g.acl != nil {
			// Anonymous: the user name it claims was not checked, so the
			// ACL must not grant by it.
			cl.Properties.Username = nil
		}
		return packets.CodeSuccess, "", true
	}
	if !pk.Connect.UsernameFlag || len(pk.Connect.Username) == 0 {
		return packets.ErrNotAuthorized, "no user name: the broker admits the users of its users file only", false
	}
	if !pk.Connect.PasswordFlag || len(pk.Connect.Password) == 0 {
		// No user has an empty password (passwd.Set refuses one): no
		// check needed to refuse it.
		return packets.ErrBadUsernameOrPassword, "no password", false
	}
	return g.checkPassword(cl, string(pk.Connect.Username), string(pk.Connect.Password)) // logins.go
}

// strconvQuote quotes a string a client chose, cut, for a log line.
func strconvQuote(s string) string { return strconv.Quote(logText(s)) }

// peerCommonName returns the common name of the certificate a client
// showed on the TLS listener, when a client CA verified it.
func peerCommonName(c net.Conn) (string, bool) {
	bc, ok := c.(*boundedConn)
	if !ok {
		return "", false
	}
	tc, ok := bc.Conn.(*tls.Conn)
	if !ok {
		return "", false
	}
	st := tc.ConnectionState()
	if len(st.VerifiedChains) == 0 || len(st.VerifiedChains[0]) == 0 {
		return "", false
	}
	return st.VerifiedChains[0][0].Subject.CommonName, true
}

// tlsConfig is the TLS listener's configuration: its certificate, and
// with a client CA, client certificates required and verified.
func tlsConfig(cfg *Config) (*tls.Config, error) {
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, errors.New("broker: a TLS listener needs a certificate and its key (--listen-cert FILE --listen-key FILE)")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("broker: TLS certificate %s and key %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if cfg.TLSClientCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("broker: client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("broker: client CA %s: no PEM certificate in it", cfg.TLSClientCAFile)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// AnonymousError is CheckAccess's error: a listener that anyone who
// reaches it may use, on an address other than loopback.
type AnonymousError struct {
	Flag, Addr string // the listener's flag (--listen, --listen-tls) and address
	TLS        bool
}

func (e *AnonymousError) Error() string {
	fix := "--users FILE (clients log in; `cmdhost user add NAME --users FILE` writes it), --sat-key FILE (clients log in with a service account token)"
	if e.TLS {
		fix += " or --listen-client-ca FILE (clients show a certificate that CA signed)"
	}
	return fmt.Sprintf("%s %s is reachable from other machines and would admit anyone: give %s, or --allow-anonymous if that is meant (or listen on 127.0.0.1)",
		e.Flag, e.Addr, fix)
}

// CheckAccess refuses a configuration whose listener on an address other
// than loopback would admit clients no one authenticates, unless
// AllowAnonymous: the embedded broker is secured by default where others
// can reach it, and open only on the machine itself (the quickstart).
func (c Config) CheckAccess() error {
	if c.AllowAnonymous || c.UsersFile != "" || c.SATKeyFile != "" {
		return nil
	}
	if !isLoopback(c.Addr) {
		return &AnonymousError{Flag: "--listen", Addr: c.Addr}
	}
	if c.TLSAddr != "" && c.TLSClientCAFile == "" && !isLoopback(c.TLSAddr) {
		return &AnonymousError{Flag: "--listen-tls", Addr: c.TLSAddr, TLS: true}
	}
	return nil
}

// authenticates reports whether the broker says who its clients are: a
// users file, a client CA or token keys.
func (c Config) authenticates() bool {
	return c.UsersFile != "" || c.TLSClientCAFile != "" || c.SATKeyFile != ""
}

// isLoopback reports whether a listen address is on loopback only:
// localhost or a loopback IP. No host (all interfaces), 0.0.0.0, any
// other name or address is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
