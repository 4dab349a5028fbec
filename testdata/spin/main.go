// Command spin is a test plugin that never returns: spin is a tight loop
// with no calls, churn a loop that allocates and drops memory for ever, so
// that most of its time goes to the Go runtime's allocator and collector;
// only the deadline can stop either.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

var (
	sink  int
	churn []byte
)

func init() {
	sdk.Handle("spin", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		for {
			sink++
		}
	})
	sdk.Handle("churn", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		for i := 0; ; i++ {
			churn = make([]byte, 64<<10+i%4096)
		}
	})
}

func main() {}
