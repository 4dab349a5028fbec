// Command counter is a non-idempotent echo with a tag that shows every run:
// it replies `<payload>:<n>` where n counts 1, 2, 3 … across all instances
// of the plugin, kept in a per-plugin variable, so dedup tests see reruns.
package main

import (
	"context"
	"strconv"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("counter", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		n, err := sdk.AddVar("n", 1)
		if err != nil {
			return nil, err
		}
		out := strconv.AppendInt(append(append([]byte(nil), req.Payload...), ':'), n, 10)
		return &sdk.Response{Payload: out, ContentType: req.ContentType}, nil
	})
}

func main() {}
