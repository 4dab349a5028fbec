// Command badreply is a test plugin whose replies break the rules of MQTT
// strings, so that host tests can check that nothing it returns reaches
// the broker as it is. The payload names the case:
//
//	error      an application error whose message holds newlines, a tab,
//	           NUL, DEL, C1 controls and a non-character
//	metadata   a 200 whose metadata has a key and values with control
//	           characters, an over-long value and one clean pair ("ok")
//	ctype      a 200 whose content type holds a newline
//	long       an application error with a 100,000-byte message of
//	           3-byte characters
//	recurse    a call that recurses without end (the Go runtime aborts
//	           with a multi-line stack trace)
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/cmdhost/cmdhost/sdk"
)

// hostileText holds every class of character mosquitto refuses in a string.
const hostileText = "line one\nline two\r\n\tindented \x00nul \x7fdel \u0085nel \u009fapc \ufdd0nonchar \uffffend"

func init() {
	sdk.Handle("badreply", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		switch string(req.Payload) {
		case "error":
			return nil, errors.New("badreply: " + hostileText)
		case "metadata":
			return &sdk.Response{Payload: []byte("metadata"), Metadata: map[string]string{
				"ok":          "fine",
				"bad-value":   hostileText,
				"bad\x01key":  "value",
				"long-value":  strings.Repeat("€", 30000),
				"trailing-ok": "also fine",
			}}, nil
		case "ctype":
			return &sdk.Response{Payload: []byte("x"), ContentType: "text/plain\nX-Injected: 1"}, nil
		case "long":
			return nil, errors.New(strings.Repeat("€", 100000/3))
		case "recurse":
			return &sdk.Response{Payload: []byte{byte(recurse(1))}}, nil
		}
		return nil, errors.New("badreply: unknown case " + string(req.Payload))
	})
}

// recurse never returns: each frame holds a buffer so that the stack grows
// fast; the buffer's use keeps the compiler from removing it.
func recurse(n int) int {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	return recurse(n+1) + int(buf[(n+1)%len(buf)])
}

func main() {}
