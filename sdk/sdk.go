// Package sdk is the Go guest SDK for cmdhost handlers.
//
// A handler module is an ordinary Go main package built as a WASI reactor
// with the standard toolchain:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo.wasm .
//
// It registers its commands from an init function (a reactor's main is
// never run) and the SDK does the rest: it exports the ABI's functions
// (package abi), fetches each request into guest memory, calls the handler
// and hands the encoded response back to the host. A handler never sees the
// envelope format.
//
//	func init() {
//		sdk.Handle("echo", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
//			return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
//		})
//	}
//
//	func main() {}
//
// A returned error becomes an application error (500 with `__apErr`); an
// *Error built with InvalidPayload, UnsupportedContentType or NewError
// becomes that protocol status instead. A panic is not recovered: the host
// sees a trap, discards the instance and answers with a host fault (a 500
// whose message quotes the panic's first line, the stack in the host log),
// so a handler that may fail should return an error.
//
// A handler may call other commands, of this host or of another executor,
// with CallCommand, or several at once with FanOut (nested invocation: the
// host bounds their deadlines by the caller's and refuses call cycles).
//
// Outside GOOS=wasip1 the SDK runs against an in-memory stand-in of the host
// (variables in a map, config from SetTestConfig, nested calls from
// SetTestCalls, logs to stderr), so handlers can be unit tested natively
// with Invoke.
//
// The SDK is a module of its own, github.com/cmdhost/cmdhost/sdk, which
// requires only github.com/cmdhost/cmdhost/abi: a handler project depends
// on these two and on nothing of the host (wazero, MQTT, Redis …). Neither
// is published on a module proxy; cmdhost new writes a project that carries
// both, with replace lines in its go.mod.
package sdk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// Request is one invocation; see abi.Request for its fields.
type Request = abi.Request

// Caller is a request's verified caller (Request.Caller): the user name
// and client id the host knows sent it, zero when it knows none. Unlike
// Request.InvokerID, which the invoker wrote, no client chooses it.
type Caller = abi.Caller

// Response is a handler's reply; see abi.Response for its fields.
type Response = abi.Response

// Handler runs one command. ctx carries the call's deadline.
type Handler func(ctx context.Context, req *Request) (*Response, error)

// Option sets one of a command's declared properties.
type Option func(*abi.Command)

// Idempotent declares that running the command twice with the same input
// is harmless, which allows the host to reuse replies.
func Idempotent() Option { return func(c *abi.Command) { c.Idempotent = true } }

// ResponseTTL declares how long a reply may be reused; idempotent commands
// only.
func ResponseTTL(d time.Duration) Option { return func(c *abi.Command) { c.ResponseTTL = d } }

// ContentTypes restricts the request content types the command accepts;
// others get 415 from the host without running the handler.
func ContentTypes(types ...string) Option {
	return func(c *abi.Command) { c.ContentTypes = append(c.ContentTypes, types...) }
}

// Timeout declares the command's default execution timeout; the operator
// may override it.
func Timeout(d time.Duration) Option { return func(c *abi.Command) { c.Timeout = d } }

// Topic declares a request topic pattern for the command. Topics belong
// to the host: it serves a pattern only when its first level is a literal
// other than "cmdhost" and not starting with '$', its second level is
// {executorId}, and no topic matches both it and another command's
// pattern (docs/plugins.md, "Topics"). The default, rpc/{executorId}/{commandName},
// always qualifies.
func Topic(pattern string) Option { return func(c *abi.Command) { c.Topic = pattern } }

// TTL returns a pointer for Response.TTL: this reply may be reused for d
// (0: not at all), overriding the declared response TTL.
func TTL(d time.Duration) *time.Duration { return &d }

type command struct {
	decl    abi.Command
	handler Handler
}

// registry holds the module's commands. Guests are single threaded between
// calls and Handle runs from init, so it needs no lock.
var registry struct {
	commands []command
	err      error // the first registration error, reported by describe
}

// Handle registers a command. Call it from an init function. A bad name or
// a name registered twice is reported to the host at load, which refuses
// the module with that message.
func Handle(name string, h Handler, opts ...Option) {
	if registry.err != nil {
		return
	}
	c := command{decl: abi.Command{Name: name}, handler: h}
	for _, o := range opts {
		o(&c.decl)
	}
	if h == nil && abi.ValidateCommandName(name) == nil {
		registry.err = fmt.Errorf("command %q registered with a nil handler", name)
		return
	}
	add(c)
}

// add registers c, a command or a trigger, or records why it cannot.
func add(c command) {
	what, name := "command", c.decl.Name
	if c.decl.IsTrigger() {
		what = "trigger"
	}
	if err := abi.ValidateCommandName(name); err != nil {
		registry.err = plainErr(err)
		if c.decl.IsTrigger() {
			registry.err = fmt.Errorf("trigger on %q: %w (name it with sdk.Name)", c.decl.Trigger, registry.err)
		}
		return
	}
	for _, have := range registry.commands {
		if have.decl.Name == name {
			registry.err = fmt.Errorf("%s %q registered twice", what, name)
			return
		}
	}
	registry.commands = append(registry.commands, c)
}

// errNoCommands is the describe error of a module that registered none:
// most often its author called Handle from main, which a plugin never
// runs (a WASI reactor runs only its package initializers).
var errNoCommands = errors.New("no commands registered (register them with sdk.Handle or sdk.OnMessage in an init function: a plugin's main never runs)")

// description encodes the registered commands, or says why it cannot. The
// host refuses the module with the reason, which exportDescribe logs.
func description() ([]byte, error) {
	if registry.err != nil {
		return nil, registry.err
	}
	if len(registry.commands) == 0 {
		return nil, errNoCommands
	}
	d := abi.Description{Version: abi.Version}
	for _, c := range registry.commands {
		d.Commands = append(d.Commands, c.decl)
	}
	if err := d.Validate(); err != nil {
		return nil, plainErr(err)
	}
	return abi.AppendDescription(nil, &d), nil
}

// plainErr drops the "malformed envelope: " that the abi package's checks
// lead with: an author reads about a bad command name, not an envelope.
func plainErr(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), abi.ErrMalformed.Error()+": "); ok {
		return errors.New(msg)
	}
	return err
}

// Error is a protocol status a handler returns instead of running to
// completion: the request itself was unacceptable.
type Error struct {
	Status    abi.Status
	Message   string
	PropName  string // the offending property, when there is one
	PropValue string
}

func (e *Error) Error() string {
	if e == nil {
		return "handler returned a nil *sdk.Error"
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

// NewError returns an *Error; status must be one a guest may return
// (abi.GuestMayReturn).
func NewError(status abi.Status, msg string) *Error { return &Error{Status: status, Message: msg} }

// InvalidPayload says the payload is malformed: 400.
func InvalidPayload(msg string) *Error { return NewError(abi.StatusBadRequest, msg) }

// UnsupportedContentType says the content type is refused: 415.
func UnsupportedContentType(ct string) *Error {
	return &Error{Status: abi.StatusUnsupportedType, Message: "unsupported content type", PropName: "Content Type", PropValue: ct}
}

// Invoke runs the registered handler for req.Command the way the host
// would and returns the response the host would decode. It is what the
// guest's handle export does, and lets handlers be tested natively.
func Invoke(req *Request) (*Response, error) {
	out, err := dispatch(abi.AppendRequest(nil, req), nil)
	if err != nil {
		return nil, err
	}
	return abi.DecodeResponse(out)
}

// dispatch decodes an encoded request in place (in must not change
// afterwards), runs its handler and appends the encoded response to out.
func dispatch(in, out []byte) ([]byte, error) {
	req, err := abi.DecodeRequestShared(in)
	if err != nil {
		return nil, fmt.Errorf("decoding request: %w", err)
	}
	var h Handler
	for _, c := range registry.commands {
		if c.decl.Name == req.Command {
			h = c.handler
			break
		}
	}
	if h == nil {
		return nil, fmt.Errorf("no handler for command %q", req.Command)
	}
	ctx := context.Background()
	if !req.Deadline.IsZero() {
		cc := newCallContext(req.Deadline)
		defer cc.release()
		ctx = cc
	}
	resp, err := h(ctx, req)
	return abi.AppendResponse(out, toResponse(resp, err)), nil
}

// toResponse folds a handler's error into its response, and turns a
// response that breaks the ABI's rules into an application error that says
// so (rather than a host fault that costs the instance).
func toResponse(resp *Response, err error) *Response {
	if err != nil {
		resp = errorResponse(err)
	} else if resp == nil {
		resp = &Response{}
	}
	if verr := resp.Validate(); verr != nil {
		return &Response{Status: abi.StatusInternalError, AppError: true,
			Message: "handler returned an invalid response: " + verr.Error()}
	}
	return resp
}

func errorResponse(err error) *Response {
	var se *Error
	if errors.As(err, &se) && se != nil && abi.GuestMayReturn(se.Status) &&
		se.Status != abi.StatusOK && se.Status != abi.StatusNoContent {
		return &Response{Status: se.Status, AppError: se.Status == abi.StatusInternalError,
			Message: se.Message, PropName: se.PropName, PropValue: se.PropValue}
	}
	return &Response{Status: abi.StatusInternalError, AppError: true, Message: err.Error()}
}

// Remaining returns the time left before ctx's deadline; a large value when
// it has none.
func Remaining(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Duration(1<<63 - 1)
	}
	return time.Until(d)
}
