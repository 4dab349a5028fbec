package session

import (
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/eclipse/paho.golang/autopaho"
	pahosession "github.com/eclipse/paho.golang/paho/session"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// A session with more than one broker (Config.Failover, `--broker`
// given more than once): autopaho tries them in turn, Broker first, at
// each round of connection attempts, and the first that admits the
// session serves it until the connection is lost; the next round starts
// again from Broker. A failed attempt is logged with its broker, and the
// session's user (Handlers.ConnectError) hears of a round only when every
// broker of it failed: a client that gives up at the first refusal or the
// first broker down (invoke) does so only when none is left to try. Of a
// round's errors it hears the one that tells most: a refusal for who the
// client is (Refused), else the last.

// Brokers are the brokers a session connects to, in the order tried:
// Broker, then Failover.
func (c Config) Brokers() []*url.URL {
	return append([]*url.URL{c.Broker}, c.Failover...)
}

// BrokersText names the brokers for a message, their URLs fit to print:
// "mqtt://a:1883" or "mqtt://a:1883 or mqtt://b:1883".
func (c Config) BrokersText() string {
	names := make([]string, 0, 1+len(c.Failover))
	for _, u := range c.Brokers() {
		names = append(names, redact.URL(u))
	}
	return strings.Join(names, " or ")
}

// failoverRound collects the failed attempts of one round. Its methods
// are called on autopaho's connecting goroutine; the lock keeps a
// connection made (reset, from OnConnectionUp) apart.
type failoverRound struct {
	mu      sync.Mutex
	n       int   // attempts failed in this round
	telling error // the round's error that tells most
}

// failed notes a failed attempt of a round of brokers attempts: it
// returns the round's error to report and true when it was the round's
// last.
func (r *failoverRound) failed(err error, brokers int) (error, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.telling == nil || !Refused(r.telling) {
		r.telling = err
	}
	r.n++
	if r.n < brokers {
		return nil, false
	}
	telling := r.telling
	r.n, r.telling = 0, nil
	return telling, true
}

// reset starts a new round (a connection was made).
func (r *failoverRound) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n, r.telling = 0, nil
}

// attempted is the broker of the latest connection attempt.
func (s *Session) attempted() *url.URL {
	if u := s.broker.Load(); u != nil {
		return u
	}
	return s.cfg.Broker
}

// NotConnected reports whether err is Publish's when no connection was
// up (between one connection's loss and the next, as while the session
// moves to the next broker): nothing was sent, and the same message may
// be sent once a connection is up again (AwaitConnection).
func NotConnected(err error) bool {
	return errors.Is(err, autopaho.ConnectionDownError) || errors.Is(err, pahosession.ErrNoConnection)
}
