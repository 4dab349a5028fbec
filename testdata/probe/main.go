// Command probe is a test plugin that exposes what a guest can see and do,
// one command per aspect, so host tests can check the SDK round trip,
// grants, clocks, randomness, config and per-plugin variables.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/sdk"
)

// callsOnInstance counts probe-retry's calls on this instance.
var callsOnInstance int

func text(s string) *sdk.Response {
	return &sdk.Response{Payload: []byte(s), ContentType: "text/plain", Format: abi.FormatUTF8}
}

// requestView is what probe-request reports.
type requestView struct {
	Command       string            `json:"command"`
	Payload       string            `json:"payload"`
	ContentType   string            `json:"contentType"`
	Format        int               `json:"format"`
	Metadata      map[string]string `json:"metadata"`
	TopicTokens   map[string]string `json:"topicTokens"`
	InvokerID     string            `json:"invokerId"`
	CorrelationID string            `json:"correlationId"`
	ExecutorID    string            `json:"executorId"`
	DeadlineUnix  int64             `json:"deadlineUnixNano"`
	RemainingMs   int64             `json:"remainingMs"`
}

func init() {
	sdk.Handle("probe-request", func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		v := requestView{
			Command: req.Command, Payload: string(req.Payload), ContentType: req.ContentType,
			Format: int(req.Format), Metadata: req.Metadata, TopicTokens: req.TopicTokens,
			InvokerID: req.InvokerID, CorrelationID: hex.EncodeToString(req.CorrelationID),
			ExecutorID: req.ExecutorID, RemainingMs: -1,
		}
		if !req.Deadline.IsZero() {
			v.DeadlineUnix = req.Deadline.UnixNano()
			v.RemainingMs = sdk.Remaining(ctx).Milliseconds()
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: b, ContentType: "application/json", Metadata: map[string]string{"probe": "yes"}}, nil
	}, sdk.ContentTypes("application/json", "text/plain"), sdk.Timeout(3*time.Second))

	// probe-status answers with the status named in the payload.
	sdk.Handle("probe-status", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		switch string(req.Payload) {
		case "204":
			return &sdk.Response{Status: abi.StatusNoContent}, nil
		case "400":
			return nil, sdk.InvalidPayload("probe: invalid payload")
		case "415":
			return nil, sdk.UnsupportedContentType(req.ContentType)
		case "500":
			return nil, errors.New("probe: application error")
		case "ttl0":
			return &sdk.Response{Payload: []byte("no reuse"), TTL: sdk.TTL(0)}, nil
		case "reserved":
			return &sdk.Response{Status: abi.StatusRequestTimeout}, nil
		}
		return text("ok"), nil
	})

	sdk.Handle("probe-config", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		v, ok := sdk.Config(string(req.Payload))
		if !ok {
			return nil, errors.New("config key not set")
		}
		return text(v), nil
	})

	// probe-vars takes "get K", "set K V" or "add K N".
	sdk.Handle("probe-vars", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		f := strings.SplitN(string(req.Payload), " ", 3)
		switch {
		case len(f) == 2 && f[0] == "get":
			v, ok, err := sdk.GetVar(f[1])
			if err != nil {
				return nil, err
			}
			if !ok {
				return text("<unset>"), nil
			}
			return text(string(v)), nil
		case len(f) == 3 && f[0] == "set":
			if err := sdk.SetVar(f[1], []byte(f[2])); err != nil {
				return nil, err
			}
			return text("ok"), nil
		case len(f) == 3 && f[0] == "add":
			d, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, sdk.InvalidPayload("add needs an integer")
			}
			n, err := sdk.AddVar(f[1], d)
			if err != nil {
				return nil, err
			}
			return text(strconv.FormatInt(n, 10)), nil
		}
		return nil, sdk.InvalidPayload(`want "get K", "set K V" or "add K N"`)
	})

	// probe-file reads the file named in the payload.
	sdk.Handle("probe-file", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		b, err := os.ReadFile(string(req.Payload))
		if err != nil {
			return nil, err
		}
		return text(string(b)), nil
	})

	// probe-fs does one file system call, named by the payload's first
	// word, on the paths that follow: "read P", "write P DATA", "append P
	// DATA", "list D", "mkdir D", "rename A B", "symlink TARGET LINK",
	// "link A B", "readlink P", "stat P", "remove P". It answers what it
	// read, or "ok"; a failed call is an application error with the
	// guest's error (mount tests: what a guest may do in its mounts).
	sdk.Handle("probe-fs", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		f := strings.SplitN(string(req.Payload), " ", 3)
		arg := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		var err error
		switch f[0] {
		case "read":
			var b []byte
			if b, err = os.ReadFile(arg(1)); err == nil {
				return text(string(b)), nil
			}
		case "write":
			err = os.WriteFile(arg(1), []byte(arg(2)), 0o644)
		case "append":
			var fh *os.File
			if fh, err = os.OpenFile(arg(1), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				_, err = fh.WriteString(arg(2))
				err = errors.Join(err, fh.Close())
			}
		case "list":
			var es []os.DirEntry
			if es, err = os.ReadDir(arg(1)); err == nil {
				names := make([]string, len(es))
				for i, e := range es {
					names[i] = e.Name()
				}
				return text(strings.Join(names, ",")), nil
			}
		case "mkdir":
			err = os.Mkdir(arg(1), 0o755)
		case "rename":
			err = os.Rename(arg(1), arg(2))
		case "symlink":
			err = os.Symlink(arg(1), arg(2))
		case "link":
			err = os.Link(arg(1), arg(2))
		case "readlink":
			var dst string
			if dst, err = os.Readlink(arg(1)); err == nil {
				return text(dst), nil
			}
		case "stat":
			var fi os.FileInfo
			if fi, err = os.Stat(arg(1)); err == nil {
				return text(strconv.FormatInt(fi.Size(), 10) + " " + fi.Mode().String()), nil
			}
		case "remove":
			err = os.Remove(arg(1))
		default:
			return nil, sdk.InvalidPayload("unknown probe-fs call " + strconv.Quote(f[0]))
		}
		if err != nil {
			return nil, err
		}
		return text("ok"), nil
	})

	// probe-env reports the environment variable named in the payload and
	// how many variables the guest sees.
	sdk.Handle("probe-env", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		v, ok := os.LookupEnv(string(req.Payload))
		return text(strconv.FormatBool(ok) + " " + v + " " + strconv.Itoa(len(os.Environ()))), nil
	})

	sdk.Handle("probe-log", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		sdk.Infof("probe says %s", req.Payload)
		os.Stderr.WriteString("probe stderr " + string(req.Payload) + "\n")
		return text("logged"), nil
	})

	sdk.Handle("probe-rand", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		return text(hex.EncodeToString(b)), nil
	})

	// probe-idem is idempotent with a one-hour response TTL: it sleeps the
	// milliseconds before the first ':' of its payload, then echoes it
	// (benchmarks of reuse against execution).
	sdk.Handle("probe-idem", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		ms, _, _ := strings.Cut(string(req.Payload), ":")
		n, err := strconv.Atoi(ms)
		if err != nil {
			return nil, sdk.InvalidPayload("payload must start with milliseconds, e.g. 5:x")
		}
		time.Sleep(time.Duration(n) * time.Millisecond)
		return &sdk.Response{Payload: req.Payload, ContentType: req.ContentType}, nil
	}, sdk.Idempotent(), sdk.ResponseTTL(time.Hour))

	// probe-retry is idempotent and hangs (until the host cuts it) on
	// every attempt below the number in its payload, then answers with
	// its attempt and whether its instance ran anything before (the
	// on_timeout retry policy runs each retry on a fresh instance).
	sdk.Handle("probe-retry", func(_ context.Context, req *sdk.Request) (*sdk.Response, error) {
		until, err := strconv.Atoi(string(req.Payload))
		if err != nil {
			return nil, sdk.InvalidPayload("payload must be the first attempt that answers, e.g. 2")
		}
		callsOnInstance++
		if max(req.Attempt, 1) < until {
			time.Sleep(time.Hour)
		}
		return text("attempt " + strconv.Itoa(max(req.Attempt, 1)) + ", call " + strconv.Itoa(callsOnInstance) + " on its instance"), nil
	}, sdk.Idempotent())

	sdk.Handle("probe-time", func(context.Context, *sdk.Request) (*sdk.Response, error) {
		start := time.Now()
		time.Sleep(20 * time.Millisecond)
		return text(strconv.FormatInt(start.UnixNano(), 10) + " " + strconv.FormatInt(int64(time.Since(start)), 10)), nil
	})
}

func main() {}
