package session

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/eclipse/paho.golang/paho"
	"github.com/fsnotify/fsnotify"

	"github.com/cmdhost/cmdhost/internal/jwt"
	"github.com/cmdhost/cmdhost/internal/secret"
)

// Logging in with a Kubernetes service account token (Auth.TokenFile),
// as the Azure IoT Operations SDK does: MQTT v5 enhanced authentication
// with the method K8S-SAT, the token as the CONNECT's Authentication
// Data. Kubelet replaces the token file before the token expires (a
// projected volume swaps a ..data link in the file's folder); the
// session watches the folder and, when the token changed, sends it in an
// AUTH packet (reason 0x19, re-authenticate) on the live connection: the
// connection, its subscriptions and the requests in flight stay. A
// broker that refuses the new token disconnects the session; it then
// connects again with whatever the file holds, and a refusal is said as
// any refused CONNECT is (RefusedError). A file that cannot be read when
// it changes (mid-write by a writer that does not rename) keeps the
// connection as it is; the next change or connection reads it again.

// SATMethod is the authentication method of a Kubernetes service account
// token.
const SATMethod = "K8S-SAT"

// reasonReauthenticate is the AUTH reason code "re-authenticate" (MQTT v5
// §3.15.2.1).
const reasonReauthenticate = 0x19

// method is the authentication method a's CONNECT names: SATMethod with
// a token file, else none.
func (a Auth) method() string {
	if a.TokenFile != "" {
		return SATMethod
	}
	return ""
}

// token reads the token file (one line, at most jwt.MaxTokenBytes and its
// newline: the largest token the embedded broker accepts).
func (a Auth) token() ([]byte, error) {
	v, err := secret.ReadFileMax(a.TokenFile, jwt.MaxTokenBytes+len("\r\n"))
	if err == nil && len(v) > jwt.MaxTokenBytes {
		err = fmt.Errorf("secret file %s: a token of %d bytes, more than %d", a.TokenFile, len(v), jwt.MaxTokenBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("the token file (K8S-SAT): %w", err)
	}
	return []byte(v), nil
}

// satAuth is the session's side of K8S-SAT: the token last sent, and
// paho's handler of a broker's AUTH challenge. Safe for concurrent use
// (CONNECTs are built on autopaho's goroutine, re-authentications on the
// watch's).
type satAuth struct {
	mu   sync.Mutex
	last []byte // the token last sent in a CONNECT or an accepted AUTH

	reauths, refused atomic.Int64
}

// sent records tok as sent.
func (a *satAuth) sent(tok []byte) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = tok
}

// changed reports whether tok is not the token last sent.
func (a *satAuth) changed(tok []byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !bytes.Equal(a.last, tok)
}

// Authenticate answers a broker's AUTH "continue authentication" (paho's
// Auther): K8S-SAT has no challenge, so the answer is the token again.
func (a *satAuth) Authenticate(*paho.Auth) *paho.Auth {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &paho.Auth{ReasonCode: 0x18, Properties: &paho.AuthProperties{AuthMethod: SATMethod, AuthData: a.last}}
}

// Authenticated is paho's report of a successful authentication: nothing
// to do (reauthenticate reads the answer).
func (a *satAuth) Authenticated() {}

// watchToken starts re-authenticating whenever the token file changes,
// until Disconnect. It watches the file's folder, not the file: the file
// is replaced (renamed over, or a ..data link swapped), not written in
// place. The watch is set before it returns: a change after Connect is
// seen.
func (s *Session) watchToken() {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(filepath.Dir(filepath.Clean(s.cfg.Auth.TokenFile))); err != nil {
			_ = w.Close()
		}
	}
	if err != nil {
		s.log.Error("the token file is not watched: a new token is sent only at the next connection", "file", s.cfg.Auth.TokenFile, "err", err)
		return
	}
	go s.tokenChanges(w)
}

// tokenChanges re-authenticates at each change of the token file that w
// reports, until Disconnect.
func (s *Session) tokenChanges(w *fsnotify.Watcher) {
	defer w.Close()
	name := filepath.Base(s.cfg.Auth.TokenFile)
	for {
		select {
		case <-s.closed:
			return
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("watching the token file", "file", s.cfg.Auth.TokenFile, "err", err)
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if base := filepath.Base(ev.Name); base == name || base == "..data" { // a Kubernetes volume's swap: its ..data link, not its other steps
				s.reauthenticate()
			}
		}
	}
}

// reauthenticate sends the token file's token in an AUTH packet on the
// live connection if it is not the one last sent.
func (s *Session) reauthenticate() {
	tok, err := s.cfg.Auth.token()
	if err != nil {
		s.log.Warn("the token file changed and cannot be read: the connection stays as it is; it is read again at its next change or the next connection", "err", err)
		return
	}
	if !s.sat.changed(tok) {
		return
	}
	cm := s.cm.Load()
	if cm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ConnectTimeout)
	defer cancel()
	resp, err := cm.Authenticate(ctx, &paho.Auth{ReasonCode: reasonReauthenticate,
		Properties: &paho.AuthProperties{AuthMethod: SATMethod, AuthData: tok}})
	switch {
	case err != nil:
		s.log.Warn("re-authentication with the new token not done: the next connection sends it", "err", err)
	case resp.Success:
		s.sat.sent(tok)
		s.log.Info("re-authenticated with the new token (K8S-SAT) on the live connection", "file", s.cfg.Auth.TokenFile)
		s.sat.reauths.Add(1) // counted once said: a test that waits for it finds the line
	default:
		why := ""
		if resp.Properties != nil {
			why = CleanText(resp.Properties.ReasonString, 256)
		}
		s.log.Error("the broker refused the new token (K8S-SAT) and disconnected: connecting again with the token file's",
			"reason_code", fmt.Sprintf("0x%02X", resp.ReasonCode), "reason", ConnackText(resp.ReasonCode), "reason_string", why,
			"file", s.cfg.Auth.TokenFile)
		s.sat.refused.Add(1)
	}
}
