// Command tally keeps a durable counter in the state store: the
// exactly-once tests of the state store kill and restart real hosts under
// load, and check that the counter ends equal to the requests answered.
//
//   - tally (non-idempotent) adds 1 to the counter n, records which value
//     the request (its payload) got under "req/PAYLOAD", and replies with
//     the value: a request whose writes applied twice would take two
//     values, and leave the counter ahead of the requests answered. It
//     publishes the value on tally/PAYLOAD, when granted (the outbox's
//     tests count the messages).
//   - tally-fail adds 1 and publishes, then fails (an application
//     error): its write must never apply, its message never go.
//   - tally-slow adds 1, then spins until the host cuts it (timeout
//     100 ms): its write must never apply either.
//   - tally-read replies with the counter ("0" when absent).
package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/cmdhost/cmdhost/sdk"
)

var sink int

func init() {
	sdk.Handle("tally", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		n, err := sdk.State().Add("n", 1)
		if err != nil {
			return nil, err
		}
		v := strconv.FormatInt(n, 10)
		if err := sdk.State().Set("req/"+string(req.Payload), []byte(v), sdk.IfAbsent()); err != nil {
			return nil, err // a second run of a request that committed would land here
		}
		if err := publish("tally/"+string(req.Payload), v); err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: []byte(v), ContentType: "text/plain"}, nil
	})
	sdk.Handle("tally-fail", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		if _, err := sdk.State().Add("n", 1); err != nil {
			return nil, err
		}
		if err := publish("tally/failed/"+string(req.Payload), "never sent"); err != nil {
			return nil, err
		}
		return nil, errors.New("tally: deliberate failure after a write")
	})
	sdk.Handle("tally-slow", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		if _, err := sdk.State().Add("n", 1); err != nil {
			return nil, err
		}
		for {
			sink++
		}
	}, sdk.Timeout(100*time.Millisecond))
	sdk.Handle("tally-read", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		v, _, err := sdk.State().Get("n")
		if errors.Is(err, sdk.ErrStateNotFound) {
			v, err = []byte("0"), nil
		}
		if err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: v, ContentType: "text/plain"}, nil
	}, sdk.Idempotent())
}

// publish sends v on topic, as a CloudEvent, when the operator file
// grants the plugin to publish there (the tests that count messages do).
func publish(topic, v string) error {
	err := sdk.Publish(&sdk.Message{Topic: topic, Payload: []byte(v), ContentType: "text/plain",
		Event: &sdk.Event{Type: "tally.added"}})
	if errors.Is(err, sdk.ErrPublishDenied) {
		return nil
	}
	return err
}

func main() {}
