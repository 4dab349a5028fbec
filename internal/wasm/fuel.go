package wasm

import (
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// attrFuel is the span attribute of the fuel a call used, set on the span
// the call's context carries (the host's cmdhost.execute) when it records.
const attrFuel = attribute.Key("cmdhost.fuel")

// Fuel is work counted in units, about one per WebAssembly instruction run
// (package meter says how it is counted): the same call with the same
// input uses the same fuel. A plugin's calls may be given a budget
// (PluginConfig.Fuel, CommandFuel); a call that uses it up ends with
// KindFuel.

// FuelBuckets are the upper bounds of the fuel histogram's buckets, in
// units: powers of 10 from 10^3 to 10^11 (one call of 10^11 units runs for
// about a minute).
var FuelBuckets = [...]int64{1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11}

// FuelStats is the fuel a plugin's calls used: a cumulative histogram.
type FuelStats struct {
	// Calls is the calls counted: those that ran the guest, failed ones
	// included; Sum their units.
	Calls int64 `json:"calls"`
	Sum   int64 `json:"sum"`
	// Buckets[i] counts the calls that used at most FuelBuckets[i] units.
	Buckets [len(FuelBuckets)]int64 `json:"buckets"`
	// Last is the units the last call counted used.
	Last int64 `json:"last"`
}

// Add adds o's counts to s (the stats of several versions of a plugin);
// Last is o's when o counted a call.
func (s *FuelStats) Add(o FuelStats) {
	s.Calls += o.Calls
	s.Sum += o.Sum
	for i := range s.Buckets {
		s.Buckets[i] += o.Buckets[i]
	}
	if o.Calls > 0 {
		s.Last = o.Last
	}
}

// PerCall is the mean units of the calls counted; 0 when none.
func (s FuelStats) PerCall() int64 {
	if s.Calls == 0 {
		return 0
	}
	return s.Sum / s.Calls
}

// fuelHistogram records the fuel of a plugin's calls; lock-free counters.
type fuelHistogram struct {
	calls, sum, last atomic.Int64
	buckets          [len(FuelBuckets)]atomic.Int64
}

func (h *fuelHistogram) record(units int64) {
	h.calls.Add(1)
	h.sum.Add(units)
	h.last.Store(units)
	for i, b := range FuelBuckets {
		if units <= b {
			h.buckets[i].Add(1)
		}
	}
}

func (h *fuelHistogram) snapshot() FuelStats {
	s := FuelStats{Calls: h.calls.Load(), Sum: h.sum.Load(), Last: h.last.Load()}
	for i := range h.buckets {
		s.Buckets[i] = h.buckets[i].Load()
	}
	return s
}

// countsFuel says whether the plugin's calls count their fuel: when it or
// one of its commands has a budget, or CountFuel asks. Counting rewrites
// the module (metering.go), which costs compute 1.0–1.45× (BENCHMARKS.md).
func (c PluginConfig) countsFuel() bool {
	if c.CountFuel || c.Fuel > 0 {
		return true
	}
	for _, f := range c.CommandFuel {
		if f > 0 {
			return true
		}
	}
	return false
}

// fuelBudget is the budget of a call of the command: its own, else the
// plugin's; 0 when there is none.
func (c PluginConfig) fuelBudget(command string) int64 {
	if f, ok := c.CommandFuel[command]; ok && f != 0 {
		return max(f, 0) // NoBound: none, whatever the plugin's
	}
	return max(c.Fuel, 0)
}

// FuelError is the cause of a KindFuel error: what the call used and its
// budget.
type FuelError struct {
	Used, Budget int64
}

func (e *FuelError) Error() string {
	return fmt.Sprintf("the call used %d units of fuel, its budget is %d: raise \"fuel\" in the plugin's operator file", e.Used, e.Budget)
}
