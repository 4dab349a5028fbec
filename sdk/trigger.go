package sdk

import (
	"context"
	"fmt"
	"strings"

	"github.com/cmdhost/cmdhost/abi"
)

// MessageHandler handles one message of a trigger (OnMessage). ctx
// carries the call's deadline. nil means the message is handled: the host
// commits what the call wrote and published, and acknowledges the message.
// An error (or a panic, a trap, the deadline) fails this attempt: the host
// runs the handler again, up to the trigger's attempts, then drops the
// message (docs/messages.md, "Handlers triggered by messages").
//
// The message is a Request: Payload, ContentType, Format, Topic (the
// topic it came on), TopicTokens (the values of the filter's {token}
// levels), Metadata (its user properties, CloudEvents attributes
// included, the protocol's __ ones removed), InvokerID (its __srcId),
// CorrelationID, Caller (its sender as the broker verified it, when the
// host knows one) and Attempt.
type MessageHandler func(ctx context.Context, msg *Request) error

// OnMessage registers a trigger: h runs for each message published on
// the topic filter, whose levels are literal, a {token} (any one level,
// its value in msg.TopicTokens), + (any one level) or, last, # (any
// levels). Call it from an init function, like Handle.
//
// The host subscribes only when the plugin's operator file confirms the
// trigger by name ("triggers": {"NAME": {}}), and never to its own topics
// (a first level of rpc, cmdhost, clients, statestore, or one starting
// with $). The trigger's name is Name's, else the filter's levels joined
// with '.', a {token} level giving its name, + "any" and # "all":
// "sensors/{device}/temp" is "sensors.device.temp". Timeout and
// Idempotent apply as to a command (an idempotent trigger's messages go
// out as it runs and no outcome is kept for its message ids);
// ContentTypes makes the host drop a message of another content type
// without running h.
//
//	func init() {
//		sdk.OnMessage("sensors/{device}/temp", func(ctx context.Context, m *sdk.Request) error {
//			_, err := sdk.State().Add(ctx, "readings/"+m.TopicTokens["device"], 1)
//			return err
//		}, sdk.Name("on-temp"))
//	}
func OnMessage(filter string, h MessageHandler, opts ...Option) {
	if registry.err != nil {
		return
	}
	if h == nil {
		registry.err = fmt.Errorf("trigger on %q registered with a nil handler", filter)
		return
	}
	c := command{decl: abi.Command{Trigger: filter}, handler: func(ctx context.Context, req *Request) (*Response, error) {
		if err := h(ctx, req); err != nil {
			return nil, err
		}
		return &Response{Status: abi.StatusNoContent}, nil
	}}
	for _, o := range opts {
		o(&c.decl)
	}
	if c.decl.Name == "" {
		c.decl.Name = TriggerName(filter)
	}
	add(c)
}

// Name names a trigger (OnMessage); its operator file confirms it by
// this name. For a command (Handle), the name given to Handle wins.
func Name(name string) Option {
	return func(c *abi.Command) {
		if c.IsTrigger() {
			c.Name = name
		}
	}
}

// TriggerName is the name a trigger on filter has when Name gives none:
// the filter's levels joined with '.', a {token} level giving its name,
// + "any" and # "all".
func TriggerName(filter string) string {
	levels := strings.Split(filter, "/")
	for i, l := range levels {
		switch {
		case l == "+":
			levels[i] = "any"
		case l == "#":
			levels[i] = "all"
		case strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"):
			levels[i] = l[1 : len(l)-1]
		}
	}
	return strings.Join(levels, ".")
}
