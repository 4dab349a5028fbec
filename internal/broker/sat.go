package broker

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/jwt"
	"github.com/cmdhost/cmdhost/internal/ratelog"
)

// Clients that log in with a Kubernetes service account token, as the
// Azure IoT Operations broker admits them (Config.SATKeyFile): MQTT v5
// enhanced authentication with the method K8S-SAT, the token (a JWT) as
// the CONNECT's Authentication Data.
//
//   - The token must be signed by one of the issuer's keys (the keys
//     file: PEM or JWKS, re-read when it changes), be for the audience
//     (Config.SATAudience), not be expired, and be at most
//     jwt.MaxTokenBytes. Its subject is the client's user name (what
//     the ACL grants by), whatever user name the CONNECT claims. A token
//     refused: CONNACK 0x87; another method: 0x8C.
//   - A client re-authenticates on its live connection with an AUTH
//     packet (reason 0x19) carrying a new token: one that passes the same
//     checks, for the same subject, is answered AUTH 0x00 and the
//     connection goes on; any other is answered DISCONNECT 0x87 and the
//     connection ends.
//   - A client still connected when its token expires is disconnected
//     (DISCONNECT 0x87): a token's expiry bounds what it gives.
//   - Token checks take their turns with the password checks
//     (guard.checks, logins.go): a CONNECT waits for its turn, fairly
//     across source addresses, within loginWait, a re-authentication
//     without bound (it holds up its own connection only). Refused
//     re-authentications and accepted ones are logged at most once a
//     second each, with the number left out: a client may send AUTH
//     packets as fast as it likes.

// SATMethod is the authentication method of a Kubernetes service account
// token.
const SATMethod = "K8S-SAT"

// DefaultSATAudience is Config.SATAudience when it is not set: the
// audience of the tokens the Azure IoT Operations broker admits.
const DefaultSATAudience = "aio-internal"

// reasonReauthenticate is the AUTH reason code "re-authenticate" (MQTT v5
// §3.15.2.1).
const reasonReauthenticate = 0x19

// codeTokenExpired is the DISCONNECT of a client whose token expired.
var codeTokenExpired = packets.Code{Code: packets.ErrNotAuthorized.Code, Reason: "not authorized: the token expired"}

// SATStats count the K8S-SAT logins.
type SATStats struct {
	// Logins counts CONNECTs admitted with a token; Reauthentications
	// new tokens accepted on live connections; Refused tokens refused
	// (at CONNECT or AUTH); Expired clients disconnected as their token
	// expired.
	Logins, Reauthentications, Refused, Expired int64
}

// SATStats returns the K8S-SAT counters (zero without Config.SATKeyFile).
func (e *Embedded) SATStats() SATStats {
	s := e.guard.sat
	if s == nil {
		return SATStats{}
	}
	return SATStats{Logins: s.logins.Load(), Reauthentications: s.reauths.Load(), Refused: s.refused.Load(), Expired: s.expired.Load()}
}

// satCheck checks tokens and disconnects clients whose token expired.
// It is also the mochi hook of the AUTH packets and of the clients'
// expiry timers. Safe for concurrent use: logins run on the clients'
// goroutines, timers on the clock's.
type satCheck struct {
	mqtt.HookBase
	srv      *mqtt.Server
	keyFile  string
	audience string
	clock    clock.Clock
	log      *slog.Logger
	// checks gives the credential checks their turns (guard.checks),
	// token checks among them.
	checks *loginQueue
	// refusedLog and reauthLog rate-limit the lines of refused and
	// accepted re-authentications.
	refusedLog, reauthLog ratelog.Limiter

	mu       sync.Mutex
	keys     *jwt.Keys   // as last read
	keysSeen os.FileInfo // the keys file as last read
	expiries map[*mqtt.Client]*satSession

	logins, reauths, refused, expired atomic.Int64
}

// newSATCheck reads the keys file.
func newSATCheck(cfg *Config, srv *mqtt.Server, log *slog.Logger, checks *loginQueue) (*satCheck, error) {
	s := &satCheck{srv: srv, keyFile: cfg.SATKeyFile, audience: cfg.SATAudience, clock: clock.OrSystem(cfg.Clock),
		log: log, checks: checks, expiries: map[*mqtt.Client]*satSession{}}
	s.refusedLog.Interval, s.reauthLog.Interval = time.Second, time.Second
	if s.audience == "" {
		s.audience = DefaultSATAudience
	}
	if _, err := s.currentKeys(); err != nil {
		return nil, fmt.Errorf("broker: --sat-key: %w", err)
	}
	return s, nil
}

// currentKeys returns the keys, read again if the file changed. A file
// that no longer reads or parses keeps the keys last read (and says
// why): a broken edit does not lock every client out.
func (s *satCheck) currentKeys() (*jwt.Keys, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(s.keyFile)
	if err == nil && s.keysSeen != nil && sameFile(st, s.keysSeen) {
		return s.keys, nil
	}
	if err == nil {
		var k *jwt.Keys
		if k, err = jwt.ReadKeys(s.keyFile); err == nil {
			if s.keys != nil {
				s.log.Info("embedded broker: the token keys file changed: read again", "file", s.keyFile, "keys", k.Len())
			}
			s.keys, s.keysSeen = k, st
			return k, nil
		}
	}
	if s.keys == nil {
		return nil, err
	}
	if st == nil && s.keysSeen == nil {
		return s.keys, nil // gone, and said so already: not logged at every login
	}
	s.keysSeen = st // not read again until it changes again
	s.log.Error("embedded broker: the token keys file changed and is not valid: checking tokens against the keys last read", "file", s.keyFile, "err", err)
	return s.keys, nil
}

// sameFile reports whether a and b are the same version of a file.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// verify checks a token.
func (s *satCheck) verify(token []byte) (jwt.Claims, error) {
	if len(token) > jwt.MaxTokenBytes {
		return jwt.Claims{}, fmt.Errorf("token of %d bytes: more than %d", len(token), jwt.MaxTokenBytes)
	}
	keys, err := s.currentKeys()
	if err != nil {
		return jwt.Claims{}, err
	}
	return jwt.Verify(string(token), keys, s.audience, s.clock.Now())
}

// login checks the token of a CONNECT: ok, or the CONNACK code and why.
// It waits for its turn (checks), or is refused busy.
func (s *satCheck) login(cl *mqtt.Client, pk packets.Packet) (code packets.Code, why string, ok bool) {
	if len(pk.Properties.AuthenticationData) == 0 {
		s.refused.Add(1)
		return packets.ErrNotAuthorized, "service account token refused: the CONNECT carries none", false
	}
	release, busy := s.checks.turn(sourceOf(cl.Net.Conn.RemoteAddr()), false)
	if release == nil {
		return packets.ErrServerBusy, busy, false
	}
	claims, err := s.verify(pk.Properties.AuthenticationData)
	release()
	if err != nil {
		s.refused.Add(1)
		return packets.ErrNotAuthorized, "service account token refused: " + err.Error(), false
	}
	cl.Properties.Username = []byte(claims.Subject)
	return packets.CodeSuccess, "", true
}

func (s *satCheck) ID() string { return "cmdhost-k8s-sat" }

func (s *satCheck) Provides(b byte) bool {
	switch b {
	case mqtt.OnSessionEstablished, mqtt.OnAuthPacket, mqtt.OnDisconnect, mqtt.OnPacketEncode:
		return true
	}
	return false
}

// usesSAT reports whether a client logged in with a token.
func usesSAT(cl *mqtt.Client) bool {
	return cl.Net.Listener != inProcessListener && cl.Properties.Props.AuthenticationMethod == SATMethod
}

// OnSessionEstablished arms the expiry of a client admitted with a token
// (here, not at login: a client refused after its login, for its client
// id, holds no timer).
func (s *satCheck) OnSessionEstablished(cl *mqtt.Client, pk packets.Packet) {
	if !usesSAT(cl) {
		return
	}
	// The token's signature was checked at login, on this same packet:
	// its claims are read again for the expiry, not its signature.
	token := pk.Properties.AuthenticationData
	claims, err := jwt.Claimed(string(token), s.audience, s.clock.Now())
	if err != nil { // expired since its login, a moment ago
		s.expire(cl, nil)
		return
	}
	s.logins.Add(1)
	s.arm(cl, claims.Expiry, token)
}

// satSession is a token client's expiry timer, and the digest of the
// token it was set by: the same token sent again in an AUTH packet is
// taken without checking it again (a client looping on it would
// otherwise hold the checks every login waits for).
type satSession struct {
	timer clock.Timer
	token [sha256.Size]byte
}

// arm (re)sets the time at which cl is disconnected: exp, that of token.
func (s *satCheck) arm(cl *mqtt.Client, exp time.Time, token []byte) {
	ss := &satSession{token: sha256.Sum256(token)} // hashed outside the lock every login takes
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.expiries[cl]; old != nil {
		old.timer.Stop()
	}
	ss.timer = s.clock.AfterFunc(exp.Sub(s.clock.Now()), func() { s.expire(cl, ss) })
	s.expiries[cl] = ss
}

// accepted reports whether token is the one cl's expiry was last set by.
// A token longer than any accepted one is not hashed at all, and none is
// hashed under the lock every login takes.
func (s *satCheck) accepted(cl *mqtt.Client, token []byte) bool {
	if len(token) > jwt.MaxTokenBytes {
		return false
	}
	sum := sha256.Sum256(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.expiries[cl]
	return ss != nil && ss.token == sum
}

// expire disconnects a client whose token expired: ss's timer fired (a
// timer replaced by a new token's meanwhile does nothing), or, with ss
// nil, its token expired before its session was up.
func (s *satCheck) expire(cl *mqtt.Client, ss *satSession) {
	s.mu.Lock()
	if ss != nil && s.expiries[cl] != ss {
		s.mu.Unlock()
		return
	}
	delete(s.expiries, cl)
	s.mu.Unlock()
	if cl.Closed() {
		return
	}
	s.expired.Add(1)
	s.log.Warn("embedded broker: client disconnected: its service account token expired", "client", logText(cl.ID),
		"user", logText(string(cl.Properties.Username)), "remote", cl.Net.Remote)
	_ = s.srv.DisconnectClient(cl, codeTokenExpired)
}

// OnDisconnect forgets a client's expiry.
func (s *satCheck) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.expiries[cl]; ss != nil {
		ss.timer.Stop()
		delete(s.expiries, cl)
	}
}

// OnAuthPacket takes a client's new token (re-authentication). A refusal
// sends DISCONNECT and closes the connection here: returned as an error,
// mochi would do the same but log the whole packet, the token with it.
func (s *satCheck) OnAuthPacket(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	refuse := func(code packets.Code, why string) (packets.Packet, error) {
		s.refused.Add(1)
		// Rate-limited: any client may send AUTH packets, and reconnect
		// to send more.
		if ok, leftOut := s.refusedLog.Allow(s.clock.Now()); ok {
			s.log.Warn("embedded broker: client disconnected: re-authentication refused: "+why, withLeftOut(leftOut, "refusals_not_logged",
				"client", logText(cl.ID), "user", logText(string(cl.Properties.Username)), "remote", cl.Net.Remote,
				"reason_code", fmt.Sprintf("0x%02x", code.Code))...)
		}
		_ = s.srv.DisconnectClient(cl, code)
		return pk, nil
	}
	switch {
	case !usesSAT(cl) || pk.Properties.AuthenticationMethod != SATMethod:
		return refuse(packets.ErrBadAuthenticationMethod, "an AUTH packet of a client that did not log in with K8S-SAT, or of another method")
	case pk.ReasonCode != reasonReauthenticate:
		return refuse(packets.ErrProtocolViolationInvalidReason, "K8S-SAT has no challenge: an AUTH packet other than re-authenticate (0x19)")
	}
	token := pk.Properties.AuthenticationData
	if s.accepted(cl, token) { // the same token again: nothing new to check or arm
		return s.authOK(cl, pk)
	}
	release := s.checks.turnWait(sourceOf(cl.Net.Conn.RemoteAddr())) // this connection's goroutine only
	claims, err := s.verify(token)
	release()
	if err != nil {
		return refuse(packets.ErrNotAuthorized, "service account token refused: "+err.Error())
	}
	if claims.Subject != string(cl.Properties.Username) {
		return refuse(packets.ErrNotAuthorized, "the new token is another subject's: a connection keeps who it is")
	}
	s.arm(cl, claims.Expiry, token)
	s.reauths.Add(1)
	if ok, leftOut := s.reauthLog.Allow(s.clock.Now()); ok {
		s.log.Info("embedded broker: client re-authenticated with a new service account token", withLeftOut(leftOut, "reauthentications_not_logged",
			"client", logText(cl.ID), "user", logText(string(cl.Properties.Username)),
			"expires", claims.Expiry.UTC().Format(time.RFC3339))...)
	}
	return s.authOK(cl, pk)
}

// authOK answers a re-authentication accepted.
func (s *satCheck) authOK(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	ok := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Auth}, ReasonCode: packets.CodeSuccess.Code,
		Properties: packets.Properties{AuthenticationMethod: SATMethod}}
	_ = cl.WritePacket(ok) // a connection that failed ends as its reader sees it
	return pk, nil
}

// OnPacketEncode names the method in the CONNACK of a client that logged
// in with it (MQTT v5 §3.2.2.3.17).
func (s *satCheck) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type == packets.Connack && pk.ReasonCode < packets.ErrUnspecifiedError.Code && usesSAT(cl) {
		pk.Properties.AuthenticationMethod = SATMethod
	}
	return pk
}

// withLeftOut is a log line's args with key and the number of lines left
// out since the last one, when some were.
func withLeftOut(leftOut int, key string, args ...any) []any {
	if leftOut > 0 {
		args = append(args, key, leftOut)
	}
	return args
}
