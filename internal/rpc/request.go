package rpc

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/state"
)

// correlationLength is the size of the correlation data (a UUID).
const correlationLength = 16

// incoming is one received request PUBLISH on its way through the
// executor.
type incoming struct {
	pub      *paho.Publish
	msg      session.Received // pub as the session delivered it: its ack goes there
	route    *route
	received time.Time

	responseTopic string
	topicProblem  string // why responseTopic cannot be answered on; "" when it can
	correlation   []byte
	expiry        time.Time // zero when the request had none
	timestamp     *hlc.Timestamp
	req           *abi.Request

	// The ask extensions (ask.go).
	askAck   bool          // cmdhost-ack: 1
	cancel   bool          // cmdhost-cancel: 1: a cancel, not a request
	accepted chan struct{} // closed once the 202 is sent; nil when none is

	// The reuse cache asked in the claim's round trip (claims.go):
	// reused is its reply, nil on a miss.
	reuseAsked bool
	reused     *reply
	reuseKey   string // reuseKey's, once worked out

	// reserved are a raw command's reserved properties (raw.go); nil
	// for another command.
	reserved map[string]string

	// txn stages the call's state writes (commit.go); nil without a
	// state store. alone runs the call with its command's lane to itself
	// (after a conflict); unlane releases the lane the run holds, nil
	// when it holds none.
	txn    *state.Txn
	alone  bool
	unlane func()

	// Tracing (tracing.go): the request span and its context; nil when
	// the request is not traced.
	span     trace.Span
	traceCtx context.Context
}

// read checks the request's headers (PROTOCOL.md "Request") and fills in.
// It returns the reply owed instead of running the command, or nil when the
// request is good: noReply when no response can be sent at all.
func (in *incoming) read(executorID string) *reply {
	props := in.pub.Properties
	if props == nil {
		props = &paho.PublishProperties{}
	}
	in.responseTopic = props.ResponseTopic
	if in.topicProblem = responseTopicProblem(in.responseTopic); in.topicProblem != "" {
		return noReply // nowhere to answer; the request is still acked (responsetopic.go)
	}
	in.correlation = props.CorrelationData
	if props.MessageExpiry != nil && *props.MessageExpiry > 0 {
		in.expiry = in.received.Add(time.Duration(*props.MessageExpiry) * time.Second)
	}

	req := &abi.Request{
		Command: in.route.cmd.Name, Payload: in.pub.Payload, ContentType: props.ContentType,
		CorrelationID: props.CorrelationData, ExecutorID: executorID,
	}
	var ver, ts string
	var hasVer bool
	raw := in.route.cmd.Raw != nil
	if raw {
		in.reserved = map[string]string{}
	}
	for _, up := range props.User {
		if raw && strings.HasPrefix(up.Key, "__") && !isStamp(up.Key) {
			if _, ok := in.reserved[up.Key]; !ok {
				in.reserved[up.Key] = up.Value
			}
		}
		switch {
		case up.Key == propProtocol:
			ver, hasVer = up.Value, true
		case up.Key == propSourceID:
			req.InvokerID = up.Value
		case up.Key == propTimestamp:
			ts = up.Value
		case up.Key == propAck:
			in.askAck = up.Value == "1"
		case up.Key == propCancel:
			in.cancel = up.Value == "1"
		case strings.HasPrefix(up.Key, "__"), up.Key == propHighPriority: // the transport's mark: the host marks its own replies
		default:
			if req.Metadata == nil {
				req.Metadata = make(map[string]string)
			}
			req.Metadata[up.Key] = up.Value
		}
	}
	if hasVer && !SupportedVersion(ver) {
		r := statusReply(abi.StatusVersionUnsupported, "protocol version "+ver+" is not supported", "", "")
		r.extra = map[string]string{propSupportedMajor: "1", propRequestedVer: ver}
		return r
	}
	switch {
	case len(props.CorrelationData) == 0:
		return statusReply(abi.StatusBadRequest, "the request has no correlation data", "Correlation Data", "")
	case len(props.CorrelationData) != correlationLength:
		return statusReply(abi.StatusBadRequest, "correlation data must be 16 bytes (a UUID)", "Correlation Data", printable(props.CorrelationData))
	case in.cancel:
		return nil // a cancel needs no expiry nor payload (ask.go)
	case in.expiry.IsZero():
		return statusReply(abi.StatusBadRequest, "the request has no message expiry", "Message Expiry", "")
	}
	if ts != "" {
		switch t, err := hlc.Parse(ts); {
		case err == nil:
			in.timestamp = &t
		case !raw: // a raw command's handler judges its __ts (raw.go)
			return statusReply(abi.StatusBadRequest, err.Error(), propTimestamp, ts)
		}
	}
	if props.PayloadFormat != nil {
		if *props.PayloadFormat > 1 {
			return statusReply(abi.StatusUnsupportedType, "payload format indicator must be 0 or 1",
				"Payload Format Indicator", strconv.Itoa(int(*props.PayloadFormat)))
		}
		req.Format = abi.FormatIndicator(*props.PayloadFormat)
	}
	if req.Format == abi.FormatUTF8 && !utf8.Valid(req.Payload) {
		// A handler must be able to trust the indicator (MQTT: a payload
		// marked 1 is UTF-8), so such a request never reaches it.
		return statusReply(abi.StatusBadRequest, "the payload format indicator is 1 (UTF-8 text) but the payload is not valid UTF-8",
			"Payload Format Indicator", "1")
	}
	req.TopicTokens, _ = in.route.pattern.Match(in.pub.Topic)
	in.req = req
	return nil
}

// SupportedVersion accepts protocol versions (__protVer) with major
// version 1, as the executor and the trigger receiver do.
func SupportedVersion(v string) bool {
	major, minor, ok := strings.Cut(v, ".")
	if !ok {
		minor = "0"
	}
	_, errMinor := strconv.ParseUint(minor, 10, 32)
	return major == "1" && errMinor == nil
}
