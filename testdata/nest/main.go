// Command nest is a test plugin for nested invocation: its commands call
// other commands through sdk.CallCommand and sdk.FanOut and report what
// came back as JSON, so host tests can check deadlines, the cycle guard,
// the depth limit and the sync strategies with real children (echo,
// sleep, spin, probe).
package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/sdk"
)

// callSpec is one call, as tests write it.
type callSpec struct {
	Command     string            `json:"command"`
	Executor    string            `json:"executor,omitempty"`
	Payload     string            `json:"payload,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	TimeoutMs   int64             `json:"timeout_ms,omitempty"`
}

func (c callSpec) call() sdk.Call {
	return sdk.Call{Command: c.Command, Executor: c.Executor, Payload: []byte(c.Payload),
		ContentType: c.ContentType, Metadata: c.Metadata, Timeout: time.Duration(c.TimeoutMs) * time.Millisecond}
}

// resultView is one result, as tests read it.
type resultView struct {
	Error       string            `json:"error,omitempty"` // CallCommand's error
	Outcome     string            `json:"outcome"`
	Reason      string            `json:"reason,omitempty"`
	Status      int               `json:"status"`
	AppError    bool              `json:"app_error,omitempty"`
	Message     string            `json:"message,omitempty"`
	Payload     string            `json:"payload,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	ElapsedMs   float64           `json:"elapsed_ms"`
	BudgetMs    float64           `json:"budget_ms"`
}

func view(r *sdk.Result) resultView {
	v := resultView{Outcome: r.Outcome.String(), Status: int(r.Status), AppError: r.AppError,
		Message: r.Message, Payload: string(r.Payload), ContentType: r.ContentType, Metadata: r.Metadata,
		ElapsedMs: float64(r.Elapsed) / 1e6, BudgetMs: float64(r.Budget) / 1e6}
	if r.Reason != abi.ReasonNone {
		v.Reason = r.Reason.String()
	}
	return v
}

func reply(v any) (*sdk.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.Response{Payload: b, ContentType: "application/json"}, nil
}

// nestCall runs the call in its payload and reports its result.
func nestCall(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
	var spec callSpec
	if err := json.Unmarshal(req.Payload, &spec); err != nil {
		return nil, sdk.InvalidPayload(err.Error())
	}
	res, err := sdk.CallCommand(ctx, spec.call())
	v := resultView{}
	if res != nil {
		v = view(res)
	}
	if err != nil {
		v.Error = err.Error()
	}
	return reply(v)
}

// fanSpec is a fan-out, as tests write it.
type fanSpec struct {
	Branches map[string]callSpec `json:"branches"`
	Sync     struct {
		Strategy  string `json:"strategy"` // all, any, m_of_n
		M         uint32 `json:"m"`
		TimeoutMs int64  `json:"timeout_ms"`
		OnTimeout string `json:"on_timeout"` // proceed_with_available, fail
	} `json:"sync"`
}

type fanView struct {
	Error   string                `json:"error,omitempty"`
	Results map[string]resultView `json:"results"`
}

func nestFan(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
	var spec fanSpec
	if err := json.Unmarshal(req.Payload, &spec); err != nil {
		return nil, sdk.InvalidPayload(err.Error())
	}
	s := sdk.Sync{M: spec.Sync.M, Timeout: time.Duration(spec.Sync.TimeoutMs) * time.Millisecond}
	switch spec.Sync.Strategy {
	case "", "all":
	case "any":
		s.Strategy = abi.SyncAny
	case "m_of_n":
		s.Strategy = abi.SyncMOfN
	default:
		return nil, sdk.InvalidPayload("strategy: all, any or m_of_n")
	}
	if spec.Sync.OnTimeout == "fail" {
		s.OnTimeout = abi.SyncFail
	}
	calls := make(map[string]sdk.Call, len(spec.Branches))
	for name, c := range spec.Branches {
		calls[name] = c.call()
	}
	results, err := sdk.FanOut(ctx, s, calls)
	v := fanView{Results: map[string]resultView{}}
	for name, r := range results {
		v.Results[name] = view(r)
	}
	if err != nil {
		v.Error = err.Error()
	}
	return reply(v)
}

// cycle calls next and passes its answer, or its failure, on.
func cycle(next string) sdk.Handler {
	return func(ctx context.Context, req *sdk.Request) (*sdk.Response, error) {
		res, err := sdk.CallCommand(ctx, sdk.Call{Command: next, Payload: req.Payload})
		if err != nil {
			return nil, err
		}
		if err := res.Err(); err != nil {
			return nil, err
		}
		return &sdk.Response{Payload: res.Payload, ContentType: res.ContentType}, nil
	}
}

func init() {
	sdk.Handle("nest", nestCall)
	sdk.Handle("nest-relay", nestCall) // a second name, for chains without a cycle
	sdk.Handle("nest-fan", nestFan)
	sdk.Handle("cycle-a", cycle("cycle-b"))
	sdk.Handle("cycle-b", cycle("cycle-a"))
}

func main() {}
