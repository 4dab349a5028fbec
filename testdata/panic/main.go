// Command panic is a test plugin whose handler panics: the host sees a trap.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("panic", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		panic("panic plugin: deliberate panic")
	})
}

func main() {}
