// Command ledger is a non-idempotent command whose runs outlive the host:
// each run appends a line to /ledger/runs (a read-write mount the operator
// file grants), its payload and the environment variable RUN (which host
// process ran it, when the tests grant one), and replies with the payload. The
// exactly-once tests restart and kill real hosts under load and count the
// lines per payload: a payload on two lines ran twice.
package main

import (
	"context"
	"os"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("ledger", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		f, err := os.OpenFile("/ledger/runs", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		// One write of a short line: appends of concurrent instances do not
		// interleave.
		line := append(append(append([]byte(nil), req.Payload...), ' '), os.Getenv("RUN")...)
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
	})
}

func main() {}
