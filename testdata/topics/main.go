// Command topics is a test plugin that declares the commands and request
// topic patterns its operator file's config names, so that tests can make
// plugins that claim any topic from one module: copies of topics.wasm
// under other names, each with its NAME.json.
//
// The config value "commands" lists "NAME=PATTERN" items separated by
// spaces; "NAME=" declares no pattern (the host's default). Without it the
// plugin serves one command, topics, on the default pattern. Every command
// replies "NAME:" followed by the request's payload, so a reply says which
// command answered.
package main

import (
	"context"
	"strings"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	spec, ok := sdk.Config("commands")
	if !ok {
		spec = "topics="
	}
	for _, item := range strings.Fields(spec) {
		name, pattern, _ := strings.Cut(item, "=")
		var opts []sdk.Option
		if pattern != "" {
			opts = append(opts, sdk.Topic(pattern))
		}
		sdk.Handle(name, func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
			return &sdk.Response{Payload: append([]byte(name+":"), req.Payload...)}, nil
		}, opts...)
	}
}

func main() {}
