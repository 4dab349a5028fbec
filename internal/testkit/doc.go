// Package testkit holds the helpers the module's tests share: a log sink
// safe for concurrent writes, the on-disk compilation cache every test
// engine uses, names that differ between runs of one test, a raw MQTT
// client that sees every message on its topics, and Needs, the one place
// that decides what go test -short (make unit) leaves out: what needs the
// test plugins, mosquitto, redis-server or a toolchain.
//
// Engines built on that cache are in the subpackage wasmtest, so that the
// tests of internal/wasm itself can use this package without an import cycle.
package testkit
