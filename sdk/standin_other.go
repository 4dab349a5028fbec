//go:build !wasip1

package sdk

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// The in-memory stand-in for the host, used when handlers are built and
// tested natively.
var standin struct {
	mu     sync.Mutex
	vars   map[string][]byte
	config map[string]string
}

// SetTestConfig sets the config values Config returns in native builds.
func SetTestConfig(values map[string]string) {
	standin.mu.Lock()
	defer standin.mu.Unlock()
	standin.config = values
}

func hostLog(level abi.Level, msg string) { fmt.Fprintf(os.Stderr, "[%d] %s\n", level, msg) }

func copyOut(v []byte, ok bool, buf []byte) abi.Result {
	if !ok {
		return abi.ResultNotFound
	}
	copy(buf, v)
	return abi.Result(len(v))
}

func hostConfigGet(key string, buf []byte) abi.Result {
	standin.mu.Lock()
	defer standin.mu.Unlock()
	v, ok := standin.config[key]
	return copyOut([]byte(v), ok, buf)
}

func hostVarGet(key string, buf []byte) abi.Result {
	standin.mu.Lock()
	defer standin.mu.Unlock()
	v, ok := standin.vars[key]
	return copyOut(v, ok, buf)
}

func hostVarSet(key string, value []byte) abi.Result {
	standin.mu.Lock()
	defer standin.mu.Unlock()
	if standin.vars == nil {
		standin.vars = make(map[string][]byte)
	}
	standin.vars[key] = append([]byte(nil), value...)
	return abi.ResultOK
}

func hostVarAdd(key string, delta int64) (int64, abi.Result) {
	standin.mu.Lock()
	defer standin.mu.Unlock()
	var n int64
	if v, ok := standin.vars[key]; ok {
		var err error
		if n, err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return 0, abi.ResultNotInteger
		}
	}
	n += delta
	if standin.vars == nil {
		standin.vars = make(map[string][]byte)
	}
	standin.vars[key] = strconv.AppendInt(nil, n, 10)
	return n, abi.ResultOK
}
