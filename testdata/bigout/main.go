// Command bigout is a test plugin whose reply is far larger than the host
// allows (16 MiB; the host's default bound is 4 MiB).
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("bigout", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: make([]byte, 16<<20)}, nil
	})
}

func main() {}
