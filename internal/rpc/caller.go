package rpc

import (
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// The verified caller (docs/security.md "Who is calling"). A request's
// __srcId is what its sender wrote; the executor hands a handler a caller
// only from a source no client controls: the properties cmdhost's
// embedded broker stamps on every request with the connection it
// authenticated (BrokerClientIDProperty and BrokerUserProperty, removed
// from whatever a client sent), read only with
// Config.TrustBrokerClientID, which the host sets on its own embedded
// broker and, when the operator says so, on another host's; or, on a
// broker whose ACL ties a request topic level to the publisher's user
// name (mosquitto's `pattern write rpc/ID/+/%u`), when the operator says
// so (Config.CallerTopicToken), that level.

// BrokerUserProperty is the user property in which cmdhost's embedded
// broker puts the user name it authenticated for a request's sender
// (broker.UserProperty; a test of package host checks the two agree).
const BrokerUserProperty = "__brokerUser"

// callerOf is the request's verified caller: the broker's stamps when the
// executor trusts them; else, with Config.CallerTopicToken, the value of
// that token in the request's topic as its user (the broker's ACL ties
// it to the publisher's user name); else none.
func (e *Executor) callerOf(in *incoming) abi.Caller {
	switch {
	case e.cfg.TrustBrokerClientID && in.pub.Properties != nil:
		u := in.pub.Properties.User
		return abi.Caller{User: u.Get(BrokerUserProperty), ClientID: u.Get(BrokerClientIDProperty)}
	case e.cfg.CallerTopicToken != "" && in.req != nil:
		return abi.Caller{User: in.req.TopicTokens[e.cfg.CallerTopicToken]}
	}
	return abi.Caller{}
}

// admitCaller asks the command's Admit (who may call it) before anything else
// runs or a reused reply is sent: a refusal is the request's reply.
func (e *Executor) admitCaller(in *incoming) *reply {
	if in.route.cmd.Admit == nil {
		return nil
	}
	if se := in.route.cmd.Admit(in.req); se != nil {
		return se.reply()
	}
	return nil
}

// reply is the status reply e stands for.
func (e *StatusError) reply() *reply {
	r := statusReply(e.Status, e.Message, e.PropName, e.PropValue)
	if e.RetryAfter > 0 {
		r.propName, r.propValue = RetryAfterProperty, isoDuration(e.RetryAfter.Round(time.Millisecond))
	}
	return r
}

// RetryAfterProperty is the __propName of a refusal that says when to
// send again (a caller over its quota): __propVal is an ISO 8601 duration
// such as PT0.25S.
const RetryAfterProperty = "RetryAfter"
