package sdk

import (
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/abi"
)

// Log writes a message to the host's log, tagged with the plugin.
func Log(level abi.Level, msg string) { hostLog(level, msg) }

// Debugf logs at debug level.
func Debugf(format string, args ...any) { Log(abi.LevelDebug, fmt.Sprintf(format, args...)) }

// Infof logs at info level.
func Infof(format string, args ...any) { Log(abi.LevelInfo, fmt.Sprintf(format, args...)) }

// Warnf logs at warning level.
func Warnf(format string, args ...any) { Log(abi.LevelWarn, fmt.Sprintf(format, args...)) }

// Errorf logs at error level.
func Errorf(format string, args ...any) { Log(abi.LevelError, fmt.Sprintf(format, args...)) }

// Config returns the operator's config value for key.
func Config(key string) (string, bool) {
	v, ok, err := readSized(func(buf []byte) abi.Result { return hostConfigGet(key, buf) })
	if err != nil || !ok {
		return "", false
	}
	return string(v), true
}

// Errors of the per-plugin variables.
var (
	ErrVarLimit      = errors.New("plugin variable space is full")
	ErrVarTooLarge   = errors.New("variable key or value too large")
	ErrVarNotInteger = errors.New("variable is not a decimal integer")
)

// GetVar returns a plugin variable. Variables are kept by the host and
// shared by every instance of the plugin; they outlive instances.
func GetVar(key string) ([]byte, bool, error) {
	return readSized(func(buf []byte) abi.Result { return hostVarGet(key, buf) })
}

// SetVar sets a plugin variable.
func SetVar(key string, value []byte) error { return resultErr(hostVarSet(key, value)) }

// AddVar adds delta to a variable holding a decimal integer (absent reads
// as 0) and returns the new value; atomic across all instances.
func AddVar(key string, delta int64) (int64, error) {
	n, r := hostVarAdd(key, delta)
	return n, resultErr(r)
}

// responseErr says why the host refused a response of n bytes.
//
//lint:ignore U1000 called from imports_wasip1.go, the guest build, which staticcheck does not lint
func responseErr(r abi.Result, n int) string {
	switch r {
	case abi.ResultTooLarge:
		return fmt.Sprintf("the response of %d bytes is over the host's response size bound (serve --max-response-bytes, operator maxResponseBytes)", n)
	case abi.ResultInvalid:
		return "the response is not a valid encoding (an SDK bug: report it)"
	}
	return fmt.Sprintf("host call failed with result %d", r)
}

func resultErr(r abi.Result) error {
	switch {
	case r >= 0:
		return nil
	case r == abi.ResultLimit:
		return ErrVarLimit
	case r == abi.ResultTooLarge:
		return ErrVarTooLarge
	case r == abi.ResultNotInteger:
		return ErrVarNotInteger
	}
	return fmt.Errorf("host call failed with result %d", r)
}

// readSized calls a host function that copies a value into buf and returns
// its length, growing buf once when the value did not fit.
func readSized(get func(buf []byte) abi.Result) ([]byte, bool, error) {
	buf := make([]byte, 256)
	for range 2 {
		r := get(buf)
		if r == abi.ResultNotFound {
			return nil, false, nil
		}
		if r < 0 {
			return nil, false, resultErr(r)
		}
		if int(r) <= len(buf) {
			return buf[:r], true, nil
		}
		buf = make([]byte, r)
	}
	return nil, false, errors.New("value changed size while being read")
}
