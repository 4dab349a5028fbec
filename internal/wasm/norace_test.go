//go:build !race

package wasm

// raceEnabled: see race_test.go.
const raceEnabled = false
