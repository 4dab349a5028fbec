//go:build !wasip1

package sdk_test

import (
	"context"
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
