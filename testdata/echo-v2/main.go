// Command echo-v2 is a second version of echo for hot-reload tests: it
// serves the same command, echo, and prefixes its replies with "v2:". It is
// built into testdata/plugins-alt/, outside the plugins folder, so the two
// never clash there.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("echo", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: append([]byte("v2:"), req.Payload...), ContentType: req.ContentType}, nil
	})
}

func main() {}
