// Command oom is a test plugin that allocates until the instance's memory
// limit stops it.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

var hoard [][]byte

func init() {
	sdk.Handle("oom", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1 // one write per page keeps the loop cheap
			}
			hoard = append(hoard, b)
		}
	})
}

func main() {}
