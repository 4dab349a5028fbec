// Command echo is a test plugin: it replies with the request's payload and
// content type.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("echo", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType, Format: req.Format}, nil
	})
}

func main() {}
