// Package rpc is cmdhost's face to the world: an MQTT v5 command executor
// compatible with the Azure IoT Operations RPC protocol v1.0 (PROTOCOL.md),
// and the invoker that calls such executors.
//
// The executor knows the protocol's headers and statuses; it runs no
// WebAssembly, and it does not connect: its MQTT session (package
// session: the connection, acks in receipt order, the broker's health)
// is below it, used through a small interface (mqttSession), and so are
// the invoker's. A command is a name, a topic pattern, settings and a
// Handler; the host adapts the wasm engine to that. The dedup store and
// the reuse cache are the host's choice (Config.Stores: MemoryStores or
// RedisStores). The connection is injectable (Config.Session.Dial), and
// so is the clock (Config.Clock), so tests drive the executor through a
// packet-level fake broker (package rpctest) with frozen time.
//
// Beyond v1.0, opt-in per request, the executor and the Invoker speak the
// ask extensions (ask.go: an ack, 202, so that an invoker can resend a lost
// request and fail fast when nobody listens; a cancel that closes the
// call's context and answers 499, the first terminal state winning), and
// the executor applies each command's on_timeout policy and reports every
// timeout as an event (attempts.go).
//
// Every string the host publishes is one brokers accept, whatever a
// request, a guest or an error holds (text.go), and every packet is
// checked before it goes (session.Check): a broker drops a client that
// sends a malformed string, and paho would send the stored packet again
// at every reconnect, keeping the host off the broker for good.
package rpc
