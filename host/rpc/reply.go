package rpc

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
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
		ttl: r.TTL,
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

// render builds the response PUBLISH of r for request in.
func (r *reply) render(in *incoming, expiry uint32, sourceID, ts string) *paho.Publish {
	props := paho.UserProperties{
		{Key: propStatus, Value: strconv.Itoa(int(r.status))},
		{Key: propStatusMessage, Value: r.message},
		{Key: propProtocol, Value: protocolVersion},
		{Key: propSourceID, Value: sourceID},
		{Key: propTimestamp, Value: ts},
	}
	if r.appError {
		props = append(props, paho.UserProperty{Key: propAppError, Value: "true"})
	}
	if r.propName != "" {
		props = append(props, paho.UserProperty{Key: propName, Value: r.propName})
		if r.propValue != "" {
			props = append(props, paho.UserProperty{Key: propValue, Value: r.propValue})
		}
	}
	for k, v := range r.extra {
		props = append(props, paho.UserProperty{Key: k, Value: v})
	}
	for k, v := range r.metadata {
		if !strings.HasPrefix(k, "__") { // never override the protocol's own
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
	return p
}

// printable returns b as a string for a property value: itself when it is
// UTF-8, hex otherwise.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return hex.EncodeToString(b)
}
