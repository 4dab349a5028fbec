//go:build !wasip1

package sdk_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/sdk"
)

// A module registers its commands from init (its main, empty, never runs).
func init() {
	sdk.Handle("greet", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		if len(req.Payload) == 0 {
			return nil, sdk.InvalidPayload("a name is required")
		}
		return &sdk.Response{Payload: []byte("hello, " + string(req.Payload)), ContentType: "text/plain"}, nil
	}, sdk.ContentTypes("text/plain"))
}

// Example registers a command in init, as a handler module does, and calls
// it natively with Invoke, which encodes the request, runs the handler and
// decodes its response exactly as the host and the module's handle export
// would. Invoke is how a handler is unit tested without building a module.
func Example() {
	resp, err := sdk.Invoke(&sdk.Request{Command: "greet", Payload: []byte("world"), ContentType: "text/plain"})
	if err != nil {
		fmt.Println("invoke:", err)
		return
	}
	fmt.Println(resp.Code(), string(resp.Payload))

	// A handler's *sdk.Error becomes the protocol status it names.
	resp, err = sdk.Invoke(&sdk.Request{Command: "greet", ContentType: "text/plain"})
	if err != nil {
		fmt.Println("invoke:", err)
		return
	}
	fmt.Println(resp.Code(), resp.Message)
	// Output:
	// 200 hello, world
	// 400 a name is required
}

// ExampleHTTP tests a handler that calls an HTTP API: natively, the
// requests go to SetTestHTTP's function (here by hand; TestHTTPVia sends
// them to an httptest server), with no grant checked.
func ExampleHTTP() {
	sdk.SetTestHTTP(func(ctx context.Context, r *sdk.HTTPRequest) (*sdk.HTTPResponse, error) {
		if r.URL != "https://api.example.com/v1/price" {
			return nil, &sdk.HTTPError{Reason: sdk.ErrHTTPDenied.Reason, Message: r.URL + " is not granted"}
		}
		return &sdk.HTTPResponse{Status: 200, Header: sdk.Header{"Content-Type": {"text/plain"}}, Body: []byte("42")}, nil
	})
	defer sdk.SetTestHTTP(nil)

	resp, err := sdk.HTTP(context.Background(), &sdk.HTTPRequest{URL: "https://api.example.com/v1/price"})
	fmt.Println(resp.Status, resp.Header.Get("content-type"), string(resp.Body), err)
	_, err = sdk.HTTP(context.Background(), &sdk.HTTPRequest{URL: "https://evil.example/"})
	fmt.Println(errors.Is(err, sdk.ErrHTTPDenied), err)
	// Output:
	// 200 text/plain 42 <nil>
	// true http: denied: https://evil.example/ is not granted
}
