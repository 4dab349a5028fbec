// Command kit-go is the guest kit's test plugin in Go (testdata/kit/README.md
// says what each command does; internal/nested/guestkit_test.go checks it).
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/sdk"
)

var sink int

func init() {
	sdk.Handle("kit-caller", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: []byte("user=" + req.Caller.User + ";client=" + req.Caller.ClientID), ContentType: "text/plain"}, nil
	})
	sdk.Handle("kit-echo", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType, Metadata: req.Metadata}, nil
	})
	sdk.Handle("kit-error", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		return nil, errors.New("kit: deliberate failure")
	})
	sdk.Handle("kit-status", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		switch string(req.Payload) {
		case "400":
			return nil, sdk.InvalidPayload("kit: bad payload")
		case "415":
			return nil, sdk.UnsupportedContentType(req.ContentType)
		}
		return &sdk.Response{Status: 204}, nil
	})
	sdk.Handle("kit-idem", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: req.Payload}, nil
	}, sdk.Idempotent(), sdk.ResponseTTL(time.Minute), sdk.ContentTypes("text/plain"), sdk.Timeout(2*time.Second))
	sdk.Handle("kit-config", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		v, ok := sdk.Config(string(req.Payload))
		if !ok {
			return nil, fmt.Errorf("kit: no config %s", req.Payload)
		}
		return &sdk.Response{Payload: []byte(v), ContentType: "text/plain"}, nil
	})
	sdk.Handle("kit-var", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		if string(req.Payload) == "add" {
			n, err := sdk.AddVar("n", 1)
			if err != nil {
				return nil, err
			}
			return &sdk.Response{Payload: []byte(strconv.FormatInt(n, 10)), ContentType: "text/plain"}, nil
		}
		if err := sdk.SetVar("v", req.Payload); err != nil {
			return nil, err
		}
		v, ok, err := sdk.GetVar("v")
		if err != nil || !ok {
			return nil, fmt.Errorf("kit: the variable just set is not there: %v", err)
		}
		return &sdk.Response{Payload: v}, nil
	})
	sdk.Handle("kit-log", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		sdk.Infof("%s", req.Payload)
		return &sdk.Response{}, nil
	})
	sdk.Handle("kit-nest", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		r, err := sdk.CallCommand(ctx, sdk.Call{Command: "kit-echo", Payload: req.Payload})
		if err != nil {
			return nil, err
		}
		if r.Status != 200 {
			return nil, fmt.Errorf("kit: kit-echo answered %d: %s", r.Status, r.Message)
		}
		return &sdk.Response{Payload: r.Payload}, nil
	})
	sdk.Handle("kit-fan", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		calls := map[string]sdk.Call{}
		for _, name := range []string{"a", "b"} {
			calls[name] = sdk.Call{Command: "kit-echo", Payload: append(append([]byte{}, req.Payload...), "-"+name...)}
		}
		r, err := sdk.FanOut(ctx, sdk.Sync{}, calls)
		if err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: []byte("a=" + string(r["a"].Payload) + ";b=" + string(r["b"].Payload)), ContentType: "text/plain"}, nil
	})
	sdk.Handle("kit-trap", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		panic("kit: deliberate trap")
	})
	sdk.Handle("kit-deadline", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		if string(req.Payload) == "remaining" {
			if left := sdk.Remaining(ctx); left <= 0 || left > 10*time.Second {
				return nil, fmt.Errorf("kit: remaining %v", left)
			}
			return &sdk.Response{Payload: []byte("ok"), ContentType: "text/plain"}, nil
		}
		for {
			sink++
		}
	}, sdk.Timeout(300*time.Millisecond))
	sdk.Handle("kit-state", kitState)
	sdk.Handle("kit-publish", kitPublish)
	sdk.Handle("kit-http", kitHTTP)
	sdk.OnMessage("kit/{device}/+/#", kitTrigger) // named after its filter: kit.device.any.all
}

// kitTrigger handles a message of the kit's trigger (testdata/kit/README.md,
// kit.device.any.all): it fails the attempt for the payload fail, else logs
// the message's topic, its device token and its payload.
func kitTrigger(_ context.Context, m *sdk.Request) error {
	if string(m.Payload) == "fail" {
		return fmt.Errorf("kit: deliberate failure on %s (device %s)", m.Topic, m.TopicTokens["device"])
	}
	sdk.Infof("kit-trigger topic=%s device=%s payload=%s", m.Topic, m.TopicTokens["device"], m.Payload)
	return nil
}

// kitHTTP sends the request the payload names (testdata/kit/README.md,
// kit-http) and replies with the response, or the error's word.
func kitHTTP(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
	payload, times := string(req.Payload), 1
	if n, rest, ok := strings.Cut(payload, " "); ok && strings.HasPrefix(n, "x") {
		if k, err := strconv.Atoi(n[1:]); err == nil {
			payload, times = rest, k
		}
	}
	var replies []string
	for range times {
		r, err := kitHTTPOnce(ctx, payload)
		if err != nil {
			return nil, err
		}
		replies = append(replies, r)
	}
	return &sdk.Response{Payload: []byte(strings.Join(replies, "\n")), ContentType: "text/plain"}, nil
}

// kitHTTPOnce sends the request of a kit-http payload.
func kitHTTPOnce(ctx context.Context, payload string) (string, error) {
	f := strings.SplitN(payload, " ", 3)
	if len(f) < 2 {
		return "", fmt.Errorf("kit: kit-http wants [xN] METHOD URL [BODY], not %q", payload)
	}
	r := &sdk.HTTPRequest{Method: f[0], URL: f[1], Header: sdk.Header{"X-Kit": {"go"}}}
	if len(f) > 2 {
		r.Body = []byte(f[2])
		if n, err := strconv.Atoi(strings.TrimPrefix(f[2], "+")); err == nil && strings.HasPrefix(f[2], "+") {
			r.Body = []byte(strings.Repeat("x", n))
		}
		r.Header.Set("Content-Type", "text/plain")
	}
	resp, err := sdk.HTTP(ctx, r)
	var herr *sdk.HTTPError
	switch {
	case errors.As(err, &herr):
		return strings.ReplaceAll(herr.Reason.String(), "_", "-") + ": " + herr.Message, nil
	case err != nil:
		return "", err
	}
	return strconv.Itoa(resp.Status) + " " + resp.Header.Get("X-Kit-Reply") + " " + string(resp.Body), nil
}

// kitPublish publishes what the payload says (testdata/kit/README.md,
// kit-publish) and replies ok, or the error's word.
func kitPublish(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
	f := strings.SplitN(string(req.Payload), " ", 3)
	m := &sdk.Message{Topic: f[0], ContentType: "text/plain"}
	if len(f) > 1 {
		m.Payload = []byte(f[1])
	}
	if len(f) > 2 && f[2] == "event" {
		m.Event = &sdk.Event{Type: "kit.event"}
	}
	if len(f) > 2 && f[2] == "reserved" {
		m.Metadata = map[string]string{"__ts": "x"}
	}
	word := "ok"
	switch err := sdk.Publish(m); {
	case err == nil:
	case errors.Is(err, sdk.ErrPublishDenied):
		word = "denied"
	case errors.Is(err, sdk.ErrPublishTooLarge):
		word = "too-large"
	case errors.Is(err, sdk.ErrPublishLimit):
		word = "limit"
	case errors.Is(err, sdk.ErrPublishInvalid):
		word = "invalid"
	default:
		return nil, err
	}
	return &sdk.Response{Payload: []byte(word), ContentType: "text/plain"}, nil
}

// kitState runs one state store operation named by the payload
// (testdata/kit/README.md, kit-state) and replies with what it found.
func kitState(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
	f := strings.SplitN(string(req.Payload), " ", 3)
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	own, shared := sdk.State(), sdk.SharedState("kit")
	reply := func(s string) (*sdk.Response, error) {
		return &sdk.Response{Payload: []byte(s), ContentType: "text/plain"}, nil
	}
	word := func(err error, ok string) (*sdk.Response, error) {
		switch {
		case err == nil:
			return reply(ok)
		case errors.Is(err, sdk.ErrStateConflict):
			return reply("conflict")
		case errors.Is(err, sdk.ErrStateNotFound):
			return reply("missing")
		case errors.Is(err, sdk.ErrStateDenied):
			return reply("denied")
		case errors.Is(err, sdk.ErrStateTooLarge):
			return reply("too-large")
		case errors.Is(err, sdk.ErrStateQuota):
			return reply("quota")
		case errors.Is(err, sdk.ErrStateNotInteger):
			return reply("not-integer")
		}
		return nil, err
	}
	switch arg(0) {
	case "get", "shared-get":
		space := own
		if arg(0) == "shared-get" {
			space = shared
		}
		v, version, err := space.Get(arg(1))
		if err != nil {
			return word(err, "")
		}
		if arg(0) == "shared-get" {
			return reply(string(v))
		}
		return reply(string(v) + "@" + strconv.FormatUint(version, 10))
	case "set":
		return word(own.Set(arg(1), []byte(arg(2))), "ok")
	case "setget":
		if err := own.Set(arg(1), []byte(arg(2))); err != nil {
			return word(err, "")
		}
		v, version, err := own.Get(arg(1))
		if err != nil {
			return word(err, "")
		}
		return reply(string(v) + "@" + strconv.FormatUint(version, 10))
	case "shared-set":
		return word(shared.Set(arg(1), []byte(arg(2))), "ok")
	case "absent":
		return word(own.Set(arg(1), []byte(arg(2)), sdk.IfAbsent()), "ok")
	case "cas", "delv", "ttl":
		rest := strings.SplitN(arg(2), " ", 2)
		n, err := strconv.ParseUint(rest[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("kit: %s wants a number: %w", arg(0), err)
		}
		v := ""
		if len(rest) > 1 {
			v = rest[1]
		}
		switch arg(0) {
		case "cas":
			return word(own.Set(arg(1), []byte(v), sdk.IfVersion(n)), "ok")
		case "ttl":
			return word(own.Set(arg(1), []byte(v), sdk.WithTTL(time.Duration(n)*time.Millisecond)), "ok")
		}
		existed, err := own.Delete(arg(1), sdk.IfVersion(n))
		return word(err, map[bool]string{true: "1", false: "0"}[existed])
	case "add":
		n, err := own.Add(arg(1), 1)
		return word(err, strconv.FormatInt(n, 10))
	case "del":
		existed, err := own.Delete(arg(1))
		return word(err, map[bool]string{true: "1", false: "0"}[existed])
	case "list":
		var all []string
		after := ""
		for {
			keys, more, err := own.List(arg(1), after)
			if err != nil {
				return word(err, "")
			}
			all = append(all, keys...)
			if !more {
				return reply(strings.Join(all, ","))
			}
			after = keys[len(keys)-1]
		}
	case "big":
		n, err := strconv.Atoi(arg(2))
		if err != nil {
			return nil, fmt.Errorf("kit: big wants a size: %w", err)
		}
		return word(own.Set(arg(1), []byte(strings.Repeat("x", n))), "ok")
	case "fail":
		if err := own.Set(arg(1), []byte("failed")); err != nil {
			return nil, err
		}
		return nil, errors.New("kit: deliberate failure after a write")
	}
	return nil, fmt.Errorf("kit: unknown state operation %q", arg(0))
}

func main() {}
