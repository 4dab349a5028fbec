// Command spin is a test plugin that never returns: a tight loop with no
// calls, which only closing the module's context can stop.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

var sink int

func init() {
	sdk.Handle("spin", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		for {
			sink++
		}
	})
}

func main() {}
