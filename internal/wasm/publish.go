package wasm

import (
	"context"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// Publishing: a guest sends a message with abi.FnPublish. The engine
// checks the message, the plugin's grant (a topic its operator file
// grants, with the request's tokens), the call's bounds and the plugin's
// rate, and hands the message to the Publisher set with SetPublisher: when
// it is sent (at once, or with the call's outcome) is the Publisher's
// business (package outbox).

// PublishGrant is what a plugin may publish: to the topics Topics grant,
// at most MaxMessages messages and MaxBytes bytes of payload a call, and
// Rate messages a second with bursts of Burst. The zero value grants
// nothing.
type PublishGrant struct {
	Topics      []topic.Grant
	MaxMessages int
	MaxBytes    int
	Rate        float64
	Burst       int
}

// The defaults of a PublishGrant's bounds.
const (
	DefaultPublishMessages = 16
	DefaultPublishBytes    = 1 << 20
	DefaultPublishRate     = 100
	DefaultPublishBurst    = 1000
)

func (g PublishGrant) withDefaults() PublishGrant {
	if g.MaxMessages <= 0 {
		g.MaxMessages = DefaultPublishMessages
	}
	if g.MaxBytes <= 0 {
		g.MaxBytes = DefaultPublishBytes
	}
	if g.Rate <= 0 {
		g.Rate = DefaultPublishRate
	}
	if g.Burst <= 0 {
		g.Burst = DefaultPublishBurst
	}
	return g
}

// Publisher sends the messages guests publish.
type Publisher interface {
	// Publish takes m, published by caller's call (ctx is the call's),
	// and answers the guest's result: 0, or ResultLimit when there is no
	// room for it, ResultUnavailable when it cannot be taken.
	Publish(ctx context.Context, caller Caller, m *abi.Message) abi.Result
}

// publisherBox lets an interface value live in an atomic.Pointer.
type publisherBox struct{ p Publisher }

// SetPublisher sets the Publisher of every plugin of the engine; nil
// turns publishing off (FnPublish answers ResultUnavailable).
func (e *Engine) SetPublisher(p Publisher) {
	if p == nil {
		e.publisher.Store(nil)
		return
	}
	e.publisher.Store(&publisherBox{p})
}

func (e *Engine) currentPublisher() Publisher {
	if b := e.publisher.Load(); b != nil {
		return b.p
	}
	return nil
}

// publishFuncs is FnPublish of one plugin.
type publishFuncs struct {
	plugin    string
	grant     PublishGrant
	publisher func() Publisher
	log       *slog.Logger
	refused   ratelog.Limiter
	rate      *ratelog.Rate
}

func newPublishFuncs(plugin string, g PublishGrant, publisher func() Publisher, log *slog.Logger) *publishFuncs {
	g = g.withDefaults()
	return &publishFuncs{plugin: plugin, grant: g, publisher: publisher, log: log, refused: ratelog.Limiter{Interval: time.Second},
		rate: ratelog.NewRate(g.Rate, g.Burst)}
}

// publish is abi.FnPublish (ptr, len) -> i32.
func (p *publishFuncs) publish(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil || st.request == nil {
		ret(stack, abi.ResultState)
		return
	}
	view, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		ret(stack, abi.ResultFault)
		return
	}
	m, err := abi.DecodeMessage(view) // copies out of guest memory
	if err != nil {
		p.note("message refused: it breaks the rules", "err", err)
		ret(stack, abi.ResultInvalid)
		return
	}
	if !p.granted(m.Topic, st.req) {
		p.note("publish refused: the operator file grants no such topic", "topic", m.Topic,
			"grant", `"publish": {"topics": ["`+m.Topic+`"]} in `+p.plugin+`.json`)
		ret(stack, abi.ResultDenied)
		return
	}
	if st.published+1 > p.grant.MaxMessages || st.publishedBytes+len(m.Payload) > p.grant.MaxBytes {
		ret(stack, abi.ResultTooLarge)
		return
	}
	if !p.rate.Take(time.Now()) {
		p.note("publish refused: the plugin publishes faster than its rate", "rate", p.grant.Rate, "burst", p.grant.Burst)
		ret(stack, abi.ResultLimit)
		return
	}
	pub := p.publisher()
	if pub == nil {
		ret(stack, abi.ResultUnavailable)
		return
	}
	r := pub.Publish(ctx, Caller{Plugin: p.plugin, Request: st.req}, m)
	if r == abi.ResultOK {
		st.published++
		st.publishedBytes += len(m.Payload)
	}
	ret(stack, r)
}

// granted reports whether one of the plugin's grants covers topic for
// req.
func (p *publishFuncs) granted(t string, req *abi.Request) bool {
	tokens := func(name string) string {
		switch name {
		case "executorId":
			return req.ExecutorID
		case "commandName":
			return req.Command
		case "callerClientId":
			return req.Caller.ClientID
		case "callerUser":
			return req.Caller.User
		}
		return req.TopicTokens[name]
	}
	for _, g := range p.grant.Topics {
		if g.Allows(t, tokens) {
			return true
		}
	}
	return false
}

// note logs a refusal, at most once a second per plugin.
func (p *publishFuncs) note(msg string, args ...any) {
	ok, leftOut := p.refused.Allow(time.Now())
	if !ok {
		return
	}
	args = append([]any{"plugin", p.plugin}, args...)
	if leftOut > 0 {
		args = append(args, "refusals_not_logged", leftOut)
	}
	p.log.Warn(msg, args...)
}
