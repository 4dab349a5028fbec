package rpc_test

// The native Go handler that stands in for the METL executor's user code
// and test serializer (a case's executor, serializer and sync sections),
// and the countdown events the cases synchronise on.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cmdhost/cmdhost/abi"
)

// countdown is a countdown event: Signal decrements it, Wait returns once
// it reaches zero.
type countdown struct {
	mu   sync.Mutex
	left int
	zero chan struct{}
}

func newCountdown(n int) *countdown {
	c := &countdown{left: n, zero: make(chan struct{})}
	if n <= 0 {
		close(c.zero)
	}
	return c
}

func (c *countdown) Signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left > 0 {
		if c.left--; c.left == 0 {
			close(c.zero)
		}
	}
}

// Wait waits for zero, the call's deadline, or the end of the case.
func (c *countdown) Wait(ctx context.Context, teardown <-chan struct{}) error {
	select {
	case <-c.zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-teardown:
		return errors.New("the case is over")
	}
}

type syncOp struct{ signal, wait string }

// metlSerializer is the test serializer of one executor.
type metlSerializer struct {
	outContentType        string
	acceptContentTypes    []string
	indicateCharacterData bool
	allowCharacterData    bool
	failDeserialization   bool
}

// metlHandler implements one METL executor's command.
type metlHandler struct {
	serializer metlSerializer
	responses  map[string][]string // request value → responses, used in turn
	metadata   map[string]*string  // response metadata; nil: copy the request's
	// tokenPrefix, when set, copies the resolved topic tokens into the
	// response metadata: resolvedTokens (those the executor's
	// configuration replaced, which cmdhost does not hand to handlers
	// since the handler's own configuration knows them) and the request's
	// TopicTokens (the "+" levels the executor recovered from the topic).
	tokenPrefix    *string
	resolvedTokens map[string]string
	raiseError     bool
	sync           []syncOp
	events         map[string]*countdown
	teardown       <-chan struct{}

	mu         sync.Mutex
	next       map[string]int // request value → index of its next response
	executions atomic.Int64
}

// handle is the rpc.Handler: deserialization first (content type, format
// indicator, failure), which answers 415 or 400 without executing; then
// the execution function (sync operations, error raising, the response
// map); then serialization of the response.
func (h *metlHandler) handle(ctx context.Context, req *abi.Request) (*abi.Response, error) {
	s := h.serializer
	if !slices.Contains(s.acceptContentTypes, req.ContentType) {
		return &abi.Response{
			Status: abi.StatusUnsupportedType, Message: fmt.Sprintf("content type %q is not supported", req.ContentType),
			PropName: "Content Type", PropValue: req.ContentType,
		}, nil
	}
	if req.Format == abi.FormatUTF8 && !s.allowCharacterData {
		return &abi.Response{
			Status: abi.StatusUnsupportedType, Message: "character data is not supported",
			PropName: "Payload Format Indicator", PropValue: "1",
		}, nil
	}
	if s.failDeserialization {
		return &abi.Response{Status: abi.StatusBadRequest, Message: "the request payload cannot be deserialized"}, nil
	}

	h.executions.Add(1)
	for _, op := range h.sync {
		if op.signal != "" {
			h.events[op.signal].Signal()
		}
		if op.wait != "" {
			if err := h.events[op.wait].Wait(ctx, h.teardown); err != nil {
				return nil, err
			}
		}
	}
	if h.raiseError {
		return &abi.Response{Status: abi.StatusInternalError, AppError: true, Message: "the execution function raised an error"}, nil
	}

	var value *string
	h.mu.Lock()
	if list := h.responses[string(req.Payload)]; len(list) > 0 {
		i := h.next[string(req.Payload)]
		h.next[string(req.Payload)] = i + 1
		value = &list[i%len(list)]
	}
	h.mu.Unlock()

	resp := &abi.Response{ContentType: s.outContentType}
	if s.indicateCharacterData {
		resp.Format = abi.FormatUTF8
	}
	if value != nil {
		resp.Payload = []byte(*value)
	}
	for k, v := range h.metadata {
		if resp.Metadata == nil {
			resp.Metadata = map[string]string{}
		}
		if v != nil {
			resp.Metadata[k] = *v
		} else if rv, ok := req.Metadata[k]; ok {
			resp.Metadata[k] = rv
		}
	}
	if h.tokenPrefix != nil {
		if resp.Metadata == nil {
			resp.Metadata = map[string]string{}
		}
		for k, v := range h.resolvedTokens {
			resp.Metadata[*h.tokenPrefix+k] = v
		}
		for k, v := range req.TopicTokens {
			resp.Metadata[*h.tokenPrefix+k] = v
		}
	}
	return resp, nil
}

// patternTokens returns the names of the {token}s in topic patterns.
func patternTokens(patterns ...string) []string {
	var out []string
	for _, p := range patterns {
		for _, l := range strings.Split(p, "/") {
			if strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}") {
				out = append(out, l[1:len(l)-1])
			}
		}
	}
	return out
}
