// Command fail is a test plugin whose handler returns an application error.
package main

import (
	"context"
	"errors"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("fail", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		return nil, errors.New("fail plugin: deliberate failure")
	})
}

func main() {}
