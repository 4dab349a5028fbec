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
	"time"

	"github.com/cmdhost/cmdhost/sdk"
)

func init() {
	sdk.Handle("ledger", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return record("", req)
	})
	// lookup is the same declared idempotent with a one-hour response TTL:
	// its lines ("lookup:<payload>") count the runs reuse did not save.
	sdk.Handle("lookup", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		return record("lookup:", req)
	}, sdk.Idempotent(), sdk.ResponseTTL(time.Hour))
}

// record appends the run's line and replies with the payload.
func record(prefix string, req *sdk.Request) (*sdk.Response, error) {
	f, err := os.OpenFile("/ledger/runs", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	// One write of a short line: appends of concurrent instances do not
	// interleave.
	line := append(append(append([]byte(prefix), req.Payload...), ' '), os.Getenv("RUN")...)
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
}

func main() {}
