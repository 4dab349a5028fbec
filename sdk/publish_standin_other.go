//go:build !wasip1

package sdk

import (
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// The stand-in of publishing for handlers built and tested natively: the
// messages are kept in order, for the test to read (Published).
var published struct {
	mu   sync.Mutex
	msgs []*abi.Message
}

func hostPublish(msg []byte) abi.Result {
	m, err := abi.DecodeMessage(msg)
	if err != nil {
		return abi.ResultInvalid
	}
	published.mu.Lock()
	defer published.mu.Unlock()
	published.msgs = append(published.msgs, m)
	return abi.ResultOK
}

// Published returns, and forgets, the messages published so far (native
// builds).
func Published() []*Message {
	published.mu.Lock()
	defer published.mu.Unlock()
	out := published.msgs
	published.msgs = nil
	return out
}
