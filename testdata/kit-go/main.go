// Command kit-go is the guest kit's test plugin in Go (testdata/kit/README.md
// says what each command does; internal/nested/guestkit_test.go checks it).
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
}

func main() {}
