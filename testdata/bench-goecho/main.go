// Command bench-goecho is the Go guest make bench-scale copies into a
// fleet: an echo whose command name is set at build time (-ldflags -X
// main.command=…) to a marker that each copy replaces with a name of its
// own (internal/bench/fleet).
package main

import (
	"context"

	"github.com/cmdhost/cmdhost/sdk"
)

// command is the command's name; the build sets it to fleet.GoMarker.
var command = "gecho"

func init() {
	sdk.Handle(command, func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType, Format: req.Format}, nil
	})
}

func main() {}
