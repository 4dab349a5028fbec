// Command panic is a test plugin whose handler panics: the host sees a trap.
// The payload picks the failure: "" a panic with a message; "index" an
// index out of range; "log" ordinary stderr and log lines before a panic;
// "controls" a panic message with control characters and broken UTF-8;
// "fake" a line that looks like a panic on stderr, then a normal reply.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("panic", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		switch string(req.Payload) {
		case "index":
			xs := []int{1, 2, 3}
			return &sdk.Response{Payload: []byte{byte(xs[len(req.Payload)])}}, nil // [5] with length 3
		case "log":
			fmt.Fprintln(os.Stderr, "panic plugin: first ordinary line")
			fmt.Fprintln(os.Stderr, "panic plugin: second ordinary line")
			sdk.Warnf("panic plugin: a log call")
		case "controls":
			panic("bad \x1b[31mred\x07 \xff\xfe bytes\r\nsecond line")
		case "fake":
			fmt.Fprintln(os.Stderr, "panic: not a real one")
			fmt.Fprintln(os.Stderr, "panic plugin: after the fake")
			return &sdk.Response{Payload: []byte("fine")}, nil
		}
		panic("panic plugin: deliberate panic")
	})
}

func main() {}
