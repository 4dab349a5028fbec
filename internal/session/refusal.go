package session

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/eclipse/paho.golang/autopaho"
)

// Why a connection attempt failed, said so that its reader can act: the
// broker's CONNACK reason code with its text, the x509 error of a
// certificate refused, the resolver's answer for a name that does not
// resolve. Refused tells the failures that trying again with the same
// settings cannot mend from those that may pass (a broker still starting).

// RefusedError is a CONNECT the broker refused: its CONNACK reason code,
// with the reason string it sent, if any.
type RefusedError struct {
	// Code is the CONNACK reason code (MQTT v5 §3.2.2.2), at least 0x80.
	Code byte
	// Reason is the broker's reason string, cleaned for printing; often "".
	Reason string
	// ClientID and Username are who was refused; the password is never
	// part of the error.
	ClientID, Username string
	// Method is the authentication method of the CONNECT (SATMethod), if
	// any.
	Method string
}

func (e *RefusedError) Error() string {
	who := "client " + e.ClientID
	if e.Username != "" {
		who += " (user " + e.Username + ")"
	}
	if e.Method != "" {
		who += " (authentication method " + e.Method + ")"
	}
	msg := fmt.Sprintf("the broker refused %s: %s (0x%02X)", who, ConnackText(e.Code), e.Code)
	if e.Reason != "" && !sameWords(e.Reason, ConnackText(e.Code)) {
		msg += ": " + e.Reason
	}
	return msg
}

// sameWords reports whether a broker's reason string says no more than
// the code's name: mochi sends "bad username or password" with 0x86, which
// is "bad user name or password" again.
func sameWords(reason, name string) bool {
	squash := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }
	return squash(reason) == squash(name)
}

// Credentials reports whether the broker refused the client's identity:
// bad user name or password, not authorized, banned, bad authentication
// method. Trying again with the same settings gets the same answer.
func (e *RefusedError) Credentials() bool {
	switch e.Code {
	case 0x86, 0x87, 0x8A, 0x8C:
		return true
	}
	return false
}

// connackTexts are the CONNACK reason codes of MQTT v5 §3.2.2.2, in the
// specification's words.
var connackTexts = map[byte]string{
	0x80: "unspecified error", 0x81: "malformed packet", 0x82: "protocol error",
	0x83: "implementation specific error", 0x84: "unsupported protocol version",
	0x85: "client identifier not valid", 0x86: "bad user name or password",
	0x87: "not authorized", 0x88: "server unavailable", 0x89: "server busy",
	0x8A: "banned", 0x8C: "bad authentication method", 0x90: "topic name invalid",
	0x95: "packet too large", 0x97: "quota exceeded", 0x99: "payload format invalid",
	0x9A: "retain not supported", 0x9B: "QoS not supported", 0x9C: "use another server",
	0x9D: "server moved", 0x9F: "connection rate exceeded",
}

// ConnackText is the specification's name of a CONNACK reason code.
func ConnackText(code byte) string {
	if t, ok := connackTexts[code]; ok {
		return t
	}
	return "reason code unknown to MQTT v5"
}

// TLSError is a TLS handshake that failed on a certificate: the broker's,
// which this client did not accept (the x509 error: unknown authority,
// wrong name, expired), or this client's, which the broker did not (a
// TLS alert: certificate required, bad certificate).
type TLSError struct {
	Err error
}

func (e *TLSError) Error() string { return "TLS with the broker: " + e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

// explain turns a failed connection attempt's error into the session's
// kinds: *RefusedError for a CONNACK refusal, *TLSError for a refused
// certificate; others are returned as they are.
func (s *Session) explain(err error) error {
	var ca *autopaho.ConnackError
	if errors.As(err, &ca) {
		return &RefusedError{Code: ca.ReasonCode, Reason: CleanText(ca.Reason, 256), ClientID: s.cfg.ClientID, Username: s.cfg.Auth.Username, Method: s.cfg.Auth.method()}
	}
	if certificateError(err) {
		return &TLSError{Err: err}
	}
	// TLS 1.3 ends the client's handshake before the broker has checked
	// the client's certificate: a broker that refuses it sends an alert
	// and closes, which the session may read, or may meet as a reset
	// while it writes CONNECT. Either way no CONNACK came on a TLS
	// connection the broker closed.
	if bc := s.conn.Load(); bc != nil && bc.tls && closedByPeer(err) {
		if rerr := bc.readError(); rerr != nil && certificateError(rerr) {
			return &TLSError{Err: rerr}
		}
		return &TLSError{Err: fmt.Errorf("the broker closed the connection after the TLS handshake, before it answered CONNECT: "+
			"it refused this client's certificate, or its lack of one (%w)", err)}
	}
	// A plain connection closed before any CONNACK: most often a TLS
	// listener, which takes the CONNECT for a bad TLS record and closes.
	if bc := s.conn.Load(); bc != nil && !bc.tls && closedByPeer(err) {
		return fmt.Errorf("the server closed the connection before it answered CONNECT: if it listens for TLS, use mqtts:// (with --tls-ca for its CA) (%w)", err)
	}
	return err
}

// closedByPeer reports whether err is a connection the other side closed
// or reset (or that was closed after a write failed for that reason).
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// certificateError reports whether err is a TLS failure over a
// certificate, on either side.
func certificateError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		alert     tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || remoteAlert(err)
}

// remoteAlert reports whether err is a TLS alert the broker sent: crypto/tls
// returns it as a *net.OpError "remote error" ("remote error: tls: bad
// certificate").
func remoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// Refused reports whether err is a connection the broker or this client
// refused for who the other is: credentials (RefusedError.Credentials) or
// a certificate (TLSError). Trying again with the same settings gets the
// same answer, so a client starting up stops at once.
func Refused(err error) bool {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Credentials()
	}
	var t *TLSError
	return errors.As(err, &t)
}

// NoSuchHost reports whether err is the resolver's answer that the
// broker's host name does not exist.
func NoSuchHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}
