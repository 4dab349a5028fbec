package rpc

import (
	"context"

	"github.com/cmdhost/cmdhost/abi"
)

// Raw commands. A service that speaks a protocol of its own inside the
// RPC envelope, such as the Azure IoT Operations state store (package
// statestore, RESP3 payloads), needs what the envelope reserves, and
// answers on its own terms: the state store judges a request's __ts
// itself (a missing, malformed or skewed one is an error of its protocol,
// with status 200), reads a fencing token in __ft, and stamps its reply
// with the version of the key it answers about (a GET that finds nothing
// has no __ts at all). Command.Raw serves such a command. Everything
// else is the executor's, as for any command: the correlation data, the
// expiry, the protocol version, the response topic, dedup (a duplicate
// gets the first receipt's reply, __ts included, and the handler does not
// run again), admission, the deadline and the statuses of the host's own
// refusals (which carry the executor's __ts).

// RawHandler runs a raw command (Command.Raw). Its response goes out as
// Handler's does, with RawResponse.Timestamp as its __ts.
type RawHandler func(ctx context.Context, req *RawRequest) (*RawResponse, error)

// RawRequest is a request to a raw command.
type RawRequest struct {
	*abi.Request
	// Reserved are the request's user properties whose names start with
	// "__" (the protocol's, such as __ts and __protVer, and a service's,
	// such as the state store's __ft), as sent: the first value of each.
	// The executor checks none of __ts: it is merged into the executor's
	// clock only when it parses and is within the drift limit. The
	// broker's stamps are not among them (Request.Caller is what they say,
	// when the executor trusts them).
	Reserved map[string]string
}

// RawResponse is a raw command's response.
type RawResponse struct {
	abi.Response
	// Timestamp is the reply's __ts (an HLC, hlc.Timestamp's wire form);
	// "": the reply carries none.
	Timestamp string
}

// call runs c's handler, raw or not, for req; reserved are the request's
// reserved properties (a raw command's).
func (c *Command) call(ctx context.Context, req *abi.Request, reserved map[string]string) handlerResult {
	if c.Raw == nil {
		resp, err := c.Handler(ctx, req)
		return handlerResult{resp: resp, err: err}
	}
	rr, err := c.Raw(ctx, &RawRequest{Request: req, Reserved: reserved})
	if rr == nil {
		return handlerResult{err: err}
	}
	return handlerResult{resp: &rr.Response, err: err, raw: true, ts: rr.Timestamp}
}

// isStamp reports whether a user property is one the embedded broker
// stamps (caller.go), which a raw handler does not get among the reserved.
func isStamp(key string) bool { return key == BrokerClientIDProperty || key == BrokerUserProperty }
