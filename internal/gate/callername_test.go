package gate

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// A refusal names its caller cut and cleaned: a client id of 64 KiB with
// control characters does not go back out whole in the reply (published,
// and kept for the request's duplicates).
func TestCallerNameBounded(t *testing.T) {
	got := callerName(abi.Caller{User: "bob", ClientID: strings.Repeat("x\x07", 32<<10)})
	if len(got) > 400 || strings.ContainsRune(got, '\x07') || !strings.HasPrefix(got, "user bob (client ") {
		t.Errorf("callerName: %d bytes, %.80q", len(got), got)
	}
	if got := callerName(abi.Caller{User: "bob", ClientID: "bob-cli"}); got != "user bob (client bob-cli)" {
		t.Errorf("a plain caller: %q", got)
	}
}
