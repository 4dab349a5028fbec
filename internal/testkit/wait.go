package testkit

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// patience is how long a test waits for what should happen soon, before
// scaling: a hang guard, not a bound on how fast it must happen.
const patience = time.Minute

// PatienceScaleEnv names the environment variable that multiplies
// Patience, for machines slower or busier than a loaded two-core one
// (a number, e.g. 3; unset or invalid: 1).
const PatienceScaleEnv = "CMDHOST_TEST_PATIENCE"

// Patience returns how long a test waits for an event before it fails:
// a minute, times PatienceScaleEnv. Only a hang reaches it.
func Patience() time.Duration {
	if f, err := strconv.ParseFloat(os.Getenv(PatienceScaleEnv), 64); err == nil && f >= 1 {
		return time.Duration(f * float64(patience))
	}
	return patience
}

// WaitFor polls cond until it holds, failing the test with what it waited
// for if it does not within Patience. It is for state that announces no
// event; where one exists (a channel, a callback, a timer armed on a
// Clock), wait on it instead.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	limit := Patience()
	deadline := time.Now().Add(limit)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(pause)
	}
}
