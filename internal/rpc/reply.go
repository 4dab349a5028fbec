package rpc

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/session"
)

// Protocol user properties (PROTOCOL.md).
const (
	propStatus         = "__stat"
	propStatusMessage  = "__stMsg"
	propAppError       = "__apErr"
	propName           = "__propName"
	propValue          = "__propVal"
	propProtocol       = "__protVer"
	propSourceID       = "__srcId"
	propTimestamp      = "__ts"
	propSupportedMajor = "__supProtMajVer"
	propRequestedVer   = "__requestProtVer"
	protocolVersion    = "1.0"
	// propHighPriority marks every request and reply as RPC traffic that
	// an Azure IoT Operations broker lets past its backpressure (the
	// SDKs' ADR 31): its presence is the mark, its value empty. Other
	// brokers carry it as any user property.
	propHighPriority = "$high_priority"
)

// reply is the outcome of one request, kept in the dedup store so that a
// duplicate gets the same answer; it is rendered into a PUBLISH per
// delivery, with a fresh timestamp and the remaining expiry of the request
// it answers.
type reply struct {
	none bool // no response is owed (no time left, no response topic)

	status      abi.Status
	appError    bool
	message     string
	propName    string
	propValue   string
	extra       map[string]string // further protocol properties (505's versions)
	payload     []byte
	contentType string
	format      abi.FormatIndicator
	metadata    map[string]string // the handler's user properties
	ttl         *time.Duration    // the handler's reuse TTL for this reply, if it gave one
	// handled: the handler answered it (its state writes may commit,
	// commit.go); not a trap, a cut or the host's own answer.
	handled bool
	// raw: a raw command's handler answered it (raw.go): its __ts is ts,
	// none when ts is "", never the executor's clock.
	raw bool
	ts  string
}

var noReply = &reply{none: true}

// statusReply is a protocol status without a handler's involvement.
func statusReply(status abi.Status, msg, name, value string) *reply {
	return &reply{status: status, message: msg, propName: name, propValue: value}
}

// fromResponse turns a handler's response into a reply.
func fromResponse(r *abi.Response) *reply {
	return &reply{
		status: r.Code(), appError: r.AppError, message: r.Message,
		propName: r.PropName, propValue: r.PropValue,
		payload: r.Payload, contentType: r.ContentType, format: r.Format, metadata: r.Metadata,
		ttl: r.TTL, handled: true,
	}
}

// timeoutReply is 408 for an execution timeout d (PROTOCOL.md: __propVal
// is an ISO 8601 duration; the SDK's invoker rejects a 408 without it).
func timeoutReply(d time.Duration) *reply {
	return statusReply(abi.StatusRequestTimeout, "execution timeout of "+d.String()+" exceeded", "ExecutionTimeout", isoDuration(d))
}

// isoDuration formats d as an ISO 8601 duration in seconds, e.g. PT1S or
// PT0.25S.
func isoDuration(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}

// expirySeconds is the whole seconds, rounded up, left until expiry; 0
// when none are left.
func expirySeconds(now, expiry time.Time) uint32 {
	left := expiry.Sub(now)
	if left <= 0 {
		return 0
	}
	return uint32(min(math.Ceil(left.Seconds()), math.MaxUint32))
}

// render builds the response PUBLISH of r for request in. The host's
// text (the message, __propName, __propVal, the other protocol
// properties) is cleaned for the wire (text.go); ts "" leaves out __ts
// (a raw reply's, raw.go); a metadata pair
// that cannot be sent as it is (metadataProblem) is left out, since a cut
// or mended key or value would be another one, and its key is returned in
// dropped, cleaned for a log.
func (r *reply) render(in *incoming, expiry uint32, sourceID, ts string) (_ *paho.Publish, dropped []string) {
	props := paho.UserProperties{
		{Key: propStatus, Value: strconv.Itoa(int(r.status))},
		{Key: propStatusMessage, Value: cleanMessage(r.message)},
		{Key: propProtocol, Value: protocolVersion},
		{Key: propSourceID, Value: cleanText(sourceID, MaxPropertyValue)},
		{Key: propHighPriority},
	}
	if ts != "" {
		props = append(props, paho.UserProperty{Key: propTimestamp, Value: cleanText(ts, MaxPropertyValue)})
	}
	if r.appError {
		props = append(props, paho.UserProperty{Key: propAppError, Value: "true"})
	}
	if r.propName != "" {
		props = append(props, paho.UserProperty{Key: propName, Value: cleanText(r.propName, MaxPropertyValue)})
		if r.propValue != "" {
			props = append(props, paho.UserProperty{Key: propValue, Value: cleanText(r.propValue, MaxPropertyValue)})
		}
	}
	for k, v := range r.extra {
		props = append(props, paho.UserProperty{Key: k, Value: cleanText(v, MaxPropertyValue)})
	}
	for k, v := range r.metadata {
		switch {
		case strings.HasPrefix(k, "__"), k == propHighPriority: // never override the protocol's own, nor send the mark twice
		case metadataProblem(k, v) != "":
			dropped = append(dropped, cleanText(k, 64))
		default:
			props = append(props, paho.UserProperty{Key: k, Value: v})
		}
	}
	p := &paho.Publish{
		QoS:     1,
		Topic:   in.responseTopic,
		Payload: r.payload,
		Properties: &paho.PublishProperties{
			CorrelationData: in.correlation,
			ContentType:     r.contentType,
			User:            props,
		},
	}
	if expiry > 0 {
		p.Properties.MessageExpiry = &expiry
	}
	if r.format != abi.FormatBytes {
		f := byte(r.format)
		p.Properties.PayloadFormat = &f
	}
	return p, dropped
}

// printable returns b as a string for a property value: itself when it is
// UTF-8, hex otherwise.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return hex.EncodeToString(b)
}

// Reasons a reply does not go out as the handler made it
// (Observer.ReplyDropped).
const (
	// DropTooLarge: the packet is larger than the broker's Maximum
	// Packet Size (or than MQTT can frame).
	DropTooLarge = "too_large"
	// DropInvalid: the packet holds something the broker refuses (a
	// content type that is not a sendable string) or that breaks the
	// protocol (a payload marked UTF-8 that is not).
	DropInvalid = "invalid"
)

// wireReply renders r for in and checks the packet (session.Check). A reply
// the broker would refuse is replaced by a short 500 saying why or, when
// not even that can be sent, by nothing (nil); either way it is logged
// and counted (Observer.ReplyDropped). So nothing a handler returns can
// take the host off the broker.
func (e *Executor) wireReply(in *incoming, r *reply, expiry uint32) *paho.Publish {
	ts := e.stamp()
	own := ts
	if r.raw {
		own = r.ts // raw.go
	}
	p, dropped := r.render(in, expiry, e.cfg.clientID(), own)
	if len(dropped) > 0 {
		e.log.Warn("handler metadata left out of a reply: a pair that cannot be sent as it is (control characters, not UTF-8, too long)",
			"command", in.route.cmd.Name, "keys", dropped)
	}
	err := e.sess.Check(p)
	if err == nil {
		return p
	}
	reason := DropInvalid
	if errors.Is(err, session.ErrTooLarge) {
		reason = DropTooLarge
	}
	if o := e.cfg.Observer; o != nil {
		o.ReplyDropped(in.route.cmd.Name, reason)
	}
	e.log.Warn("a reply the broker would refuse is not sent; a 500 goes instead", "command", in.route.cmd.Name,
		"status", int(r.status), "err", err)
	p, _ = statusReply(abi.StatusInternalError, "the reply cannot be sent: "+err.Error(), "", "").render(in, expiry, e.cfg.clientID(), ts)
	if err := e.sess.Check(p); err != nil {
		e.log.Warn("no reply sent: not even a 500 fits", "command", in.route.cmd.Name, "err", err)
		return nil
	}
	return p
}
