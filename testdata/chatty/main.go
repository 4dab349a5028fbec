// Command chatty is a test plugin that writes as much output as it is
// asked to, to test the host's output limits. Its one command, chatty,
// takes "STREAM LINES SIZE": it writes LINES lines of SIZE bytes ('x's,
// then a newline) to STREAM, one of stdout, stderr or log (the log host
// function), then replies "done". SIZE may exceed the host's longest
// line; with LINES 1 and no newline wanted, use stream "raw", which
// writes SIZE bytes to stdout in 64 KiB writes with no newline at all.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("chatty", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		var stream string
		var lines, size int
		if _, err := fmt.Sscanf(string(req.Payload), "%s %d %d", &stream, &lines, &size); err != nil {
			return nil, sdk.InvalidPayload("want STREAM LINES SIZE: " + err.Error())
		}
		line := ""
		if stream != "raw" {
			line = strings.Repeat("x", size)
		}
		switch stream {
		case "stdout", "stderr":
			f := os.Stdout
			if stream == "stderr" {
				f = os.Stderr
			}
			b := []byte(line + "\n")
			for range lines {
				_, _ = f.Write(b)
			}
		case "log":
			for range lines {
				sdk.Log(abi.LevelInfo, line)
			}
		case "raw":
			chunk := []byte(strings.Repeat("x", 64<<10))
			for left := size; left > 0; left -= len(chunk) {
				_, _ = os.Stdout.Write(chunk[:min(left, len(chunk))])
			}
		default:
			return nil, errors.New("unknown stream " + stream)
		}
		return &sdk.Response{Payload: []byte("done")}, nil
	})
}

func main() {}
