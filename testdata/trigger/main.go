// Plugin trigger serves the triggers' tests (cmd/cmdhost/internal/servecmd/trigger_test.go)
// on real hosts:
//
//   - on-reading, a trigger on sensors/{device}/temp, records what it got
//     as JSON under "last" (topic, tokens, payload, content type, invoker,
//     metadata, caller, attempt), adds 1 to "n" and to "id/ID" (ID: the
//     message's cmdhost-message-id, else its payload): a message whose
//     writes applied twice would leave "n" ahead of the distinct ids
//     published, one lost behind them. A payload "fail-once" fails its
//     first attempt. First, when the operator file grants it, it
//     publishes the message's ID on readings/{device} (before a failure:
//     a failed attempt's message must never go; the outbox's tests count
//     them).
//   - on-fail, a trigger on fail/+, always fails: an error, or a trap for
//     the payload "trap".
//   - on-unconfirmed, a trigger on unconfirmed/+, which the tests' operator
//     files do not confirm.
//   - on-nop, a trigger on bench/+, does nothing: the telemetry side of
//     host's BenchmarkTelemetryVsEcho.
//   - trigger-get replies with the value under the key its payload names
//     ("" when absent).
//   - trigger-ids replies with the ids on-reading counted, as JSON: how
//     many, and those counted more than once; with the payload "list",
//     every id too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cmdhost/cmdhost/sdk"
)

// seen is what on-reading records of a message.
type seen struct {
	Topic       string            `json:"topic"`
	Tokens      map[string]string `json:"tokens"`
	Payload     string            `json:"payload"`
	ContentType string            `json:"contentType"`
	Invoker     string            `json:"invoker"`
	Metadata    map[string]string `json:"metadata"`
	CallerUser  string            `json:"callerUser"`
	CallerID    string            `json:"callerClientId"`
	Attempt     int               `json:"attempt"`
}

func init() {
	sdk.OnMessage("sensors/{device}/temp", func(_ context.Context, m *sdk.Request) error {
		id := m.Metadata["cmdhost-message-id"]
		if id == "" {
			id = string(m.Payload)
		}
		err := sdk.Publish(&sdk.Message{Topic: "readings/" + m.TopicTokens["device"], Payload: []byte(id), ContentType: "text/plain"})
		if err != nil && !errors.Is(err, sdk.ErrPublishDenied) {
			return err
		}
		if string(m.Payload) == "fail-once" && m.Attempt == 1 {
			return errors.New("on-reading: the first attempt fails")
		}
		b, err := json.Marshal(seen{Topic: m.Topic, Tokens: m.TopicTokens, Payload: string(m.Payload), ContentType: m.ContentType,
			Invoker: m.InvokerID, Metadata: m.Metadata, CallerUser: m.Caller.User, CallerID: m.Caller.ClientID, Attempt: m.Attempt})
		if err != nil {
			return err
		}
		if err := sdk.State().Set("last", b); err != nil {
			return err
		}
		if _, err := sdk.State().Add("n", 1); err != nil {
			return err
		}
		_, err = sdk.State().Add("id/"+id, 1)
		return err
	}, sdk.Name("on-reading"))
	sdk.OnMessage("fail/+", func(_ context.Context, m *sdk.Request) error {
		if string(m.Payload) == "trap" {
			panic("on-fail: a trap")
		}
		return errors.New("on-fail: always fails")
	}, sdk.Name("on-fail"))
	sdk.OnMessage("unconfirmed/+", func(context.Context, *sdk.Request) error { return nil }, sdk.Name("on-unconfirmed"))
	sdk.OnMessage("bench/+", func(context.Context, *sdk.Request) error { return nil }, sdk.Name("on-nop"))
	sdk.Handle("trigger-get", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		v, _, err := sdk.State().Get(string(req.Payload))
		if errors.Is(err, sdk.ErrStateNotFound) {
			v, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: v, ContentType: "application/json"}, nil
	})
	sdk.Handle("trigger-ids", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		var out struct {
			IDs   int               `json:"ids"`
			Twice map[string]string `json:"twice"`
			List  []string          `json:"list,omitempty"`
		}
		list := string(req.Payload) == "list"
		after := ""
		for {
			keys, more, err := sdk.State().List("id/", after)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				v, _, err := sdk.State().Get(k)
				if err != nil {
					return nil, err
				}
				out.IDs++
				if list {
					out.List = append(out.List, strings.TrimPrefix(k, "id/"))
				}
				if string(v) != "1" {
					if out.Twice == nil {
						out.Twice = map[string]string{}
					}
					out.Twice[k] = string(v)
				}
				after = k
			}
			if !more || len(keys) == 0 {
				break
			}
		}
		b, err := json.Marshal(out)
		return &sdk.Response{Payload: b, ContentType: "application/json"}, err
	})
}

func main() {}
