package testkit

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// runs numbers the calls of RunName in this test process.
var runs atomic.Int64

// RunName returns prefix joined to the test's name and a number that no
// other call in this process returns. A plugin loaded under it gets
// variables of its own, counting from nothing on every run of the test:
// an engine keeps a plugin's variables by name, and `go test -count=N`
// runs each test N times in one process, on the same shared engine.
func RunName(tb testing.TB, prefix string) string {
	name := strings.ReplaceAll(tb.Name(), "/", "-")
	return prefix + name + "#" + strconv.FormatInt(runs.Add(1), 10)
}
