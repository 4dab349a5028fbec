package trigger

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
)

// The telemetry headers of the Azure IoT Operations protocol
// (aio-message-metadata.md), as its telemetry receiver reads them.
const (
	propProtocol  = "__protVer" // major 1, or absent; another major: dropped
	propSourceID  = "__srcId"   // the sender's id: abi.Request.InvokerID
	propTimestamp = "__ts"      // an HLC reading, merged into the host's
)

// CloudEvents attributes (MQTT binding, binary mode) the receiver reads.
const (
	ceSpecVersion = "specversion"
	ceID          = "id"
	ceSource      = "source"
)

// msgKey identifies a message for its outcome: its id, and where the id
// comes from. The zero msgKey is a message without one.
type msgKey struct {
	id string
}

// ok reports whether the message has an id.
func (k msgKey) ok() bool { return k.id != "" }

// outcome is the outcome id of the message for trigger: the id, and the
// trigger, so that two triggers receiving one message each handle it.
func (k msgKey) outcome(trigger string) state.OutcomeID {
	return state.OutcomeID{Correlation: k.id, ResponseTopic: "cmdhost-trigger/" + trigger}
}

// read checks a message's headers as the protocol says and makes the
// request its handler gets; problem is why it is dropped instead ("" when
// it is not).
func (r *Receiver) read(t Trigger, p *paho.Publish) (req *abi.Request, key msgKey, problem string) {
	props := p.Properties
	if props == nil {
		props = &paho.PublishProperties{}
	}
	req = &abi.Request{Command: t.Name, Payload: p.Payload, ContentType: props.ContentType, Topic: p.Topic,
		CorrelationID: props.CorrelationData, ExecutorID: r.cfg.ExecutorID}
	var ver, ts, cmdhostID, ceIDv, ceSourcev string
	var hasVer, isEvent bool
	for _, up := range props.User {
		switch k := up.Key; {
		case k == propProtocol:
			ver, hasVer = up.Value, true
		case k == propSourceID:
			req.InvokerID = up.Value
		case k == propTimestamp:
			ts = up.Value
		case strings.HasPrefix(k, "__"): // the protocol's, and the broker's stamps: never a handler's
			continue
		default:
			switch k {
			case abi.MessageIDProperty:
				cmdhostID = up.Value
			case ceSpecVersion:
				isEvent = true
			case ceID:
				ceIDv = up.Value
			case ceSource:
				ceSourcev = up.Value
			}
			if req.Metadata == nil {
				req.Metadata = make(map[string]string)
			}
			req.Metadata[k] = up.Value
		}
	}
	if r.cfg.TrustBrokerIdentity {
		req.Caller = abi.Caller{User: props.User.Get(rpc.BrokerUserProperty), ClientID: props.User.Get(rpc.BrokerClientIDProperty)}
	}
	if hasVer && !rpc.SupportedVersion(ver) {
		return nil, key, fmt.Sprintf("protocol version %q is not supported (major version 1 is)", clip(ver))
	}
	if ts != "" {
		stamp, err := hlc.Parse(ts)
		if err != nil {
			return nil, key, fmt.Sprintf("__ts %q: %v", clip(ts), err)
		}
		if err := r.hlc.Update(stamp); err != nil {
			return nil, key, fmt.Sprintf("__ts %q: %v", clip(ts), err)
		}
	}
	if props.PayloadFormat != nil {
		if *props.PayloadFormat > 1 {
			return nil, key, fmt.Sprintf("payload format indicator %d (0 or 1)", *props.PayloadFormat)
		}
		req.Format = abi.FormatIndicator(*props.PayloadFormat)
	}
	if req.Format == abi.FormatUTF8 && !utf8.Valid(req.Payload) {
		return nil, key, "the payload format indicator is 1 (UTF-8 text) but the payload is not valid UTF-8"
	}
	if len(t.ContentTypes) > 0 && !slices.Contains(t.ContentTypes, req.ContentType) {
		return nil, key, fmt.Sprintf("content type %q is not one the trigger accepts (%s)", clip(req.ContentType), strings.Join(t.ContentTypes, ", "))
	}
	req.TopicTokens, _ = t.Filter.Match(p.Topic)
	// The message's id: the one cmdhost's outbox gives each message, else
	// a CloudEvent's id with its source (or, lacking one, the sender's
	// __srcId): ids are unique per source.
	switch {
	case cmdhostID != "":
		key.id = "cmdhost:" + cmdhostID
	case isEvent && ceIDv != "" && ceSourcev != "":
		key.id = "ce:" + strconv.Quote(ceSourcev) + ":" + ceIDv
	case isEvent && ceIDv != "" && req.InvokerID != "":
		key.id = "ce-src:" + strconv.Quote(req.InvokerID) + ":" + ceIDv
	}
	return req, key, ""
}

// clip makes what a sender chose fit for a log line.
func clip(s string) string { return session.CleanText(s, 128) }
