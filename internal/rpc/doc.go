// Package rpc is cmdhost's face to the world: an MQTT v5 command executor
// compatible with the Azure IoT Operations RPC protocol v1.0 (PROTOCOL.md),
// on paho.golang.
//
// The executor knows MQTT and the protocol's headers and statuses; it runs
// no WebAssembly. A command is a name, a topic pattern, settings and a
// Handler; the host adapts the wasm engine to that. The connection is
// injectable (Config.Dial), and so is the clock (Config.Now), so tests
// drive the executor through a packet-level fake broker (package rpctest)
// with frozen time.
//
// Beyond v1.0, opt-in per request, the executor and the Invoker speak the
// ask extensions (ask.go: an ack, 202, so that an invoker can resend a lost
// request and fail fast when nobody listens; a cancel that closes the
// call's context and answers 499, the first terminal state winning), and
// the executor applies each command's on_timeout policy and reports every
// timeout as an event (attempts.go).
//
// Every string the host publishes is one brokers accept, whatever a
// request, a guest or an error holds, and every packet is checked before it
// goes (wirestring.go, sendable.go): a broker drops a client that sends a
// malformed string, and paho would send the stored packet again at every
// reconnect, keeping the host off the broker for good.
package rpc
