// Package host is a cmdhost as a Go value: Config says what to serve and
// how, New builds it, Server.Run serves until its context ends. It is the
// composition root and nothing else: it builds the parts (the engine, the
// plugins manager, the executor, the nested calls, the admin ops, the
// metrics and the timeout events) in one place (server.go), closes the
// loops between them, serves the plugins' commands and the host's own
// admin ops over MQTT, and owns hot reload and the order of shutdown.
// Each part lives in a package of its own under internal/; the admin ops'
// contract and a client for them are the public package host/admin.
package host

// DefaultMaxDepth bounds the chain of nested calls when Config.Limits.MaxDepth is
// 0: the nested calls' own default (internal/nested), which a test checks
// it equals.
const DefaultMaxDepth = 8
