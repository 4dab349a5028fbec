// Plugin flood is a hostile guest of outbound reach, for
// host/reach_hostile_test.go: handlers that publish in a loop, send
// request after request, hand the host huge messages, headers and bodies
// (past the SDK's checks, through the host functions themselves) and aim
// at addresses the host refuses. Each replies with what it got, as words
// the test reads: "N ok, then WORD", WORD the first refusal's kind.
//
//   - flood-publish "N": publishes up to N messages to flood/out.
//   - flood-publish-raw "big" | "reserved" | "elsewhere": one message,
//     encoded by hand: a 2 MiB payload, a __srcId property (the
//     protocol's, refused by the SDK), a topic not granted.
//   - flood-http "N URL": up to N GETs of URL.
//   - flood-http-raw "headers URL" | "body URL": one request encoded by
//     hand: 2,000 headers of 64 bytes each, a 2 MiB body.
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("flood-publish", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		n, err := strconv.Atoi(string(req.Payload))
		if err != nil {
			return nil, fmt.Errorf("flood-publish wants a count, not %q", req.Payload)
		}
		return loop(n, func(i int) string {
			return publishWord(sdk.Publish(&sdk.Message{Topic: "flood/out", Payload: []byte(strconv.Itoa(i))}))
		}), nil
	})
	sdk.Handle("flood-publish-raw", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		m := &abi.Message{Topic: "flood/out", Payload: []byte("x")}
		switch string(req.Payload) {
		case "big":
			m.Payload = make([]byte, 2<<20)
		case "reserved":
			m.Metadata = map[string]string{"__srcId": "someone-else"}
		case "elsewhere":
			m.Topic = "elsewhere/out"
		default:
			return nil, fmt.Errorf("flood-publish-raw: big, reserved or elsewhere, not %q", req.Payload)
		}
		msg := abi.AppendMessage(nil, m)
		return word(publishWord(resultErr(abi.Result(publishImport(unsafe.Pointer(unsafe.SliceData(msg)), int32(len(msg))))))), nil
	})
	sdk.Handle("flood-http", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		count, url, _ := strings.Cut(string(req.Payload), " ")
		n, err := strconv.Atoi(count)
		if err != nil {
			return nil, fmt.Errorf("flood-http wants N URL, not %q", req.Payload)
		}
		return loop(n, func(int) string {
			resp, err := sdk.HTTP(ctx, &sdk.HTTPRequest{URL: url})
			if err == nil && resp.Status != 200 {
				return "status " + strconv.Itoa(resp.Status)
			}
			return httpWord(err)
		}), nil
	})
	sdk.Handle("flood-http-raw", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		kind, url, _ := strings.Cut(string(req.Payload), " ")
		r := &abi.HTTPRequest{Method: "POST", URL: url, Header: abi.Header{}}
		switch kind {
		case "headers":
			for i := range 2000 {
				r.Header.Add(fmt.Sprintf("X-Flood-%d", i), strings.Repeat("h", 64))
			}
		case "body":
			r.Body = make([]byte, 2<<20)
		default:
			return nil, fmt.Errorf("flood-http-raw: headers or body, then a URL, not %q", req.Payload)
		}
		buf := abi.AppendHTTPRequest(nil, r)
		n := httpRequestImport(unsafe.Pointer(unsafe.SliceData(buf)), int32(len(buf)))
		if n < 0 {
			return word(fmt.Sprintf("result %d", n)), nil
		}
		out := make([]byte, n)
		if rr := httpResultRead(unsafe.Pointer(unsafe.SliceData(out)), n); rr != n {
			return nil, fmt.Errorf("reading the result: %d", rr)
		}
		res, err := abi.DecodeHTTPResultShared(out)
		if err != nil {
			return nil, err
		}
		return word(httpWord(res.Err())), nil
	})
}

// loop runs one up to n times until it returns a word other than "ok",
// and replies "K ok, then WORD" (WORD "done" when all n were ok).
func loop(n int, one func(i int) string) *sdk.Response {
	for i := range n {
		if w := one(i); w != "ok" {
			return word(fmt.Sprintf("%d ok, then %s", i, w))
		}
	}
	return word(fmt.Sprintf("%d ok, then done", n))
}

func word(s string) *sdk.Response {
	return &sdk.Response{Payload: []byte(s), ContentType: "text/plain"}
}

// publishWord names a Publish error's kind.
func publishWord(err error) string {
	for _, k := range []struct {
		err  error
		word string
	}{{sdk.ErrPublishDenied, "denied"}, {sdk.ErrPublishLimit, "limit"}, {sdk.ErrPublishTooLarge, "too_large"},
		{sdk.ErrPublishInvalid, "invalid"}, {sdk.ErrPublishUnavailable, "unavailable"}} {
		if errors.Is(err, k.err) {
			return k.word
		}
	}
	if err != nil {
		return "error " + err.Error()
	}
	return "ok"
}

// httpWord names an HTTP error's reason (abi.HTTPReason's names).
func httpWord(err error) string {
	var herr *sdk.HTTPError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &herr):
		return herr.Reason.String()
	}
	return "error " + err.Error()
}

// resultErr is Publish's error of a host result, as the SDK maps it.
func resultErr(r abi.Result) error {
	switch r {
	case abi.ResultOK:
		return nil
	case abi.ResultDenied:
		return sdk.ErrPublishDenied
	case abi.ResultLimit:
		return sdk.ErrPublishLimit
	case abi.ResultTooLarge:
		return sdk.ErrPublishTooLarge
	case abi.ResultInvalid:
		return sdk.ErrPublishInvalid
	case abi.ResultUnavailable:
		return sdk.ErrPublishUnavailable
	}
	return fmt.Errorf("result %d", r)
}

// The host functions themselves, as the SDK imports them (past its
// checks).
//
//go:wasmimport cmdhost publish
func publishImport(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost http_request
func httpRequestImport(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost http_result_read
func httpResultRead(p unsafe.Pointer, n int32) int32

func main() {}
