// Command sleep is a test plugin: it sleeps the number of milliseconds in
// its payload, then echoes the payload.
package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("sleep", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		ms, err := strconv.Atoi(strings.TrimSpace(string(req.Payload)))
		if err != nil || ms < 0 {
			return nil, sdk.InvalidPayload("payload must be a number of milliseconds")
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
	})
}

func main() {}
