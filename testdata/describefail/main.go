// Command describefail is a test plugin that fails its description the
// ways a new plugin author does. Its operator config "case" picks one:
// "badname" registers a command whose name holds a '/'; "twice" registers
// a name twice; anything else registers nothing in init, and registers a
// command in main, which a plugin never runs.
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

func greet(context.Context, *sdk.Request) (*sdk.Response, error) {
	return &sdk.Response{Payload: []byte("hello")}, nil
}

func init() {
	c, _ := sdk.Config("case")
	switch c {
	case "badname":
		sdk.Handle("greet/all", greet)
	case "twice":
		sdk.Handle("greet", greet)
		sdk.Handle("greet", greet)
	}
}

func main() {
	sdk.Handle("greet", greet)
}
