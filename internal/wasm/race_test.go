//go:build race

package wasm

// raceEnabled: the race detector slows compiled Go code (the compiler's
// included) several times; tests that bound CPU time log instead.
const raceEnabled = true
