package rpc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// What keeps one client from locking the dedup store. Its entries are
// never removed before their request's expiry, so a request asking for
// the MQTT maximum (4294967295 s, 136 years) would hold its entry that
// long, and enough of them would refuse everyone else's requests with 503.
// Two bounds prevent it:
//
//   - The expiry honoured is capped (Config.MaxExpiry, DefaultMaxExpiry):
//     a request asking for more is refused with 400 (`__propName`
//     "Message Expiry", `__propVal` the value sent), before it takes an
//     entry. This bounds in time whatever the store holds: every entry
//     may be evicted once MaxExpiry has passed, and is gone after twice
//     that (it is kept one request window past its expiry).
//   - Each invoker may hold only its share of the entries
//     (Config.MaxDedupPerInvoker, by default a tenth of the store); over
//     it, its new requests get 503 naming the share, while the others'
//     are served. An invoker is known by its `__srcId`, or by its response
//     topic when it sends none. That is best effort: both are chosen by
//     the client, so a client may spread its requests over many names (an
//     MQTT broker can authorize response topics, which bounds how many it
//     has). The cap on expiry is what bounds the worst case: however many
//     names fill the store, it frees itself within MaxExpiry.

// DefaultMaxExpiry is the longest message expiry the executor honours when
// Config.MaxExpiry is not set. The AIO SDK's invoker sends its command
// timeout as the expiry, 10 s by default; an hour leaves room for long
// commands (and for requests queued at the broker while the host
// restarts) while bounding how long a hostile client can keep the store
// full.
const DefaultMaxExpiry = time.Hour

// defaultDedupShare is the fraction of the dedup store one invoker may
// hold when Config.MaxDedupPerInvoker is not set: ten invokers at their
// share fill the store.
const defaultDedupShare = 10

// overMaxExpiry returns the 400 owed to a request whose expiry is longer
// than the maximum, or nil.
func (e *Executor) overMaxExpiry(in *incoming) *reply {
	asked := in.expiry.Sub(in.received)
	if asked <= e.cfg.MaxExpiry {
		return nil
	}
	secs := strconv.FormatInt(int64(asked/time.Second), 10)
	return statusReply(abi.StatusBadRequest,
		fmt.Sprintf("message expiry of %s s is longer than this executor's maximum of %d s: send a shorter one",
			secs, int64(e.cfg.MaxExpiry/time.Second)),
		"Message Expiry", secs)
}

// invokerOf names the sender of a request for its share of the dedup
// store: with Config.TrustBrokerClientID, the client id the broker
// stamped on it (BrokerClientIDProperty); else its __srcId, else its response
// topic. Both are chosen by the client: an invoker sending another's
// could exhaust that one's share (docs/timeouts.md). The prefixes keep
// any of them from posing as another.
func (e *Executor) invokerOf(in *incoming) string {
	if e.cfg.TrustBrokerClientID && in.pub.Properties != nil {
		if id := in.pub.Properties.User.Get(BrokerClientIDProperty); id != "" {
			return "client:" + id
		}
	}
	if in.req != nil && in.req.InvokerID != "" {
		return "srcId:" + in.req.InvokerID
	}
	return "topic:" + in.responseTopic
}

// BrokerClientIDProperty is the user property in which cmdhost's embedded
// broker puts the client id of a request's sender (broker.ClientIDProperty;
// a test of package host checks the two agree). Config.TrustBrokerClientID.
const BrokerClientIDProperty = "__brokerClientId"

// dedupRefusal is the 503 owed to a request the dedup store cannot admit.
func dedupRefusal(err error) *reply {
	return statusReply(abi.StatusServiceUnavailable, "the host is busy: "+err.Error(), "", "")
}

// dedupConfig is the dedup store's configuration from the executor's.
func (c *Config) dedupConfig() cache.DedupConfig {
	return cache.DedupConfig{MaxEntries: c.MaxDedupEntries, MaxPerInvoker: c.MaxDedupPerInvoker, Clock: c.Clock}
}
