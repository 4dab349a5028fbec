package session

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/cmdhost/cmdhost/internal/secret"
)

// How a session proves who it is to a secured broker, and checks that the
// broker is the one it means: TLS with a CA of the operator's, a client
// certificate (mTLS), a user name and a password.
//
// No secret is ever held in a Config: the password is named by the file
// or the environment variable it is in, and is read when a CONNECT is
// made, as the certificate, its key and the CA are read when a connection
// is dialled. So a rotated file is used by the next connection without a
// restart, a Config can be logged or printed whole, and the only copy of
// the password in memory is in the CONNECT packet on its way out.

// Auth is the connection's security (Config.Auth). The zero Auth connects
// anonymously, over TLS with the system's roots when the broker URL's
// scheme is tls, mqtts or ssl.
type Auth struct {
	// CAFile is a PEM file of the certificates that may sign the
	// broker's: a private CA. "": the system's roots. Read at each
	// connection.
	CAFile string
	// CertFile and KeyFile are the client's certificate (PEM, with its
	// chain) and private key, shown to a broker that asks for one (mTLS).
	// Both or neither. Read at each connection: a rotated pair is used
	// from the next connection on.
	CertFile, KeyFile string
	// ServerName is the name the broker's certificate must be valid for;
	// "": the broker URL's host.
	ServerName string
	// Username is the user name of the CONNECT; "": the broker URL's user
	// (mqtt://NAME@host), if any.
	Username string
	// PasswordFile is a file holding the password (a trailing newline is
	// not part of it), read at each CONNECT. PasswordEnv names an
	// environment variable holding it instead. At most one of them.
	PasswordFile, PasswordEnv string
	// TokenFile is a file holding a Kubernetes service account token
	// (MQTT v5 enhanced authentication, method K8S-SAT, as the Azure IoT
	// Operations broker expects): sent in each CONNECT, and sent again
	// in an AUTH packet on the live connection whenever the file changes
	// (sat.go). Not with a password.
	TokenFile string
}

// tlsSet reports whether any TLS setting is given.
func (a Auth) tlsSet() bool {
	return a.CAFile != "" || a.CertFile != "" || a.KeyFile != "" || a.ServerName != ""
}

// resolve checks a against the broker URL u and returns it with the URL's
// user taken in, and u without its user information (the session prints
// its broker URL, and a password never comes from one: it would be in
// the process's command line and in logs) and with MQTT's port when it
// names none (1883; 8883 with TLS).
func (a Auth) resolve(u *url.URL) (Auth, *url.URL, error) {
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return a, u, errors.New("the broker URL carries a password: give it in a file (Auth.PasswordFile) or the environment, never in the URL, which processes listings and logs show")
		}
		name := u.User.Username()
		if a.Username != "" && name != "" && a.Username != name {
			return a, u, fmt.Errorf("the broker URL names user %q and the user name is %q: give one", name, a.Username)
		}
		if a.Username == "" {
			a.Username = name
		}
		bare := *u
		bare.User = nil
		u = &bare
	}
	if u.Port() == "" && u.Host != "" {
		// MQTT's ports (IANA): 1883 plain, 8883 over TLS.
		port := "1883"
		if isTLS(u) {
			port = "8883"
		}
		withPort := *u
		withPort.Host = net.JoinHostPort(u.Hostname(), port)
		u = &withPort
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return a, u, errors.New("a client certificate needs both its certificate file and its key file")
	}
	if a.PasswordFile != "" && a.PasswordEnv != "" {
		return a, u, errors.New("the password comes from a file or from the environment, not both")
	}
	if a.TokenFile != "" && (a.PasswordFile != "" || a.PasswordEnv != "") {
		return a, u, errors.New("a token file (K8S-SAT) and a password are two ways of logging in: give one")
	}
	if a.tlsSet() && !isTLS(u) {
		return a, u, fmt.Errorf("TLS settings are given but the broker URL %s is plain TCP: use mqtts://%s", u.Redacted(), u.Host)
	}
	return a, u, nil
}

// Check reads every file a names, as a connection would, and returns what
// is wrong with them (a file that cannot be read, a certificate that does
// not match its key, a CA file with no certificate, an empty password):
// an error at start rather than at every connection attempt.
func (a Auth) Check() error {
	if _, err := a.tlsConfig(""); err != nil {
		return err
	}
	if a.PasswordFile != "" || a.PasswordEnv != "" {
		if _, err := a.password(); err != nil {
			return err
		}
	}
	if a.TokenFile != "" {
		if _, err := a.token(); err != nil {
			return err
		}
	}
	return nil
}

// isTLS reports whether u's scheme asks for TLS.
func isTLS(u *url.URL) bool {
	switch strings.ToLower(u.Scheme) {
	case "tls", "mqtts", "ssl":
		return true
	}
	return false
}

// tlsConfig reads a's files into the TLS configuration of a connection to
// host (host:port or a name).
func (a Auth) tlsConfig(host string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.ServerName}
	if cfg.ServerName == "" {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		cfg.ServerName = host
	}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("the broker's CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the broker's CA file %s holds no PEM certificate", a.CAFile)
		}
		cfg.RootCAs = pool
	}
	if a.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
		if err != nil {
			// The error names the files, never their content.
			return nil, fmt.Errorf("the client certificate %s and key %s: %w", a.CertFile, a.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// maxPassword bounds a password: MQTT's binary data is at most 65,535
// bytes.
const maxPassword = 65535

// password reads the password from its file or variable, without a
// trailing newline; nil when a names neither.
func (a Auth) password() ([]byte, error) {
	var pw []byte
	switch {
	case a.PasswordFile != "":
		v, err := secret.ReadFile(a.PasswordFile) // bounded, one line
		if err != nil {
			return nil, fmt.Errorf("the password file: %w", err)
		}
		pw = []byte(v)
	case a.PasswordEnv != "":
		v, ok := os.LookupEnv(a.PasswordEnv)
		if !ok {
			return nil, fmt.Errorf("the password variable %s is not set", a.PasswordEnv)
		}
		pw = []byte(v)
	default:
		return nil, nil
	}
	pw = []byte(strings.TrimRight(string(pw), "\r\n"))
	switch {
	case len(pw) == 0:
		return nil, fmt.Errorf("the password (%s) is empty", a.passwordSource())
	case len(pw) > maxPassword:
		return nil, fmt.Errorf("the password (%s) is longer than MQTT's 65,535 bytes", a.passwordSource())
	}
	return pw, nil
}

// passwordSource names where the password comes from, for errors and
// logs: never the password.
func (a Auth) passwordSource() string {
	if a.PasswordFile != "" {
		return "file " + a.PasswordFile
	}
	return "environment variable " + a.PasswordEnv
}
