// Command counter-idem is counter declared idempotent with a one-hour
// response TTL, so reuse tests see which replies came from the cache.
package main

import (
	"context"
	"strconv"
	"time"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("counter-idem", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		n, err := sdk.AddVar("n", 1)
		if err != nil {
			return nil, err
		}
		out := strconv.AppendInt(append(append([]byte(nil), req.Payload...), ':'), n, 10)
		return &sdk.Response{Payload: out, ContentType: req.ContentType}, nil
	}, sdk.Idempotent(), sdk.ResponseTTL(time.Hour))
}

func main() {}
