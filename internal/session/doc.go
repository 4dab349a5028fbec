// Package session is cmdhost's MQTT v5 session with its broker, on
// paho.golang (the copy in third_party, with its cmdhost changes): the
// connection and everything that keeps it up and honest, below the RPC
// protocol (package rpc), which uses it through a small interface and
// knows nothing of how it connects.
//
// It exists so that the executor and the invoker share one connection
// implementation, and so that what concerns MQTT rather than the
// protocol has one home: how to connect (Config: the broker, the client
// id, the session's expiry, the Maximum Packet Size announced, the dial;
// TLS and credentials go there too), the buffered, coalescing and
// gracefully closing connection (conn.go), PUBACKs in receipt order and
// flushed before a disconnect (ackledger.go), the store of unacked
// publishes (replystore.go), messages the broker never acknowledges and
// a broker that acknowledges nothing (replywatch.go), a session taken
// over or lost (connection.go), and the goroutines that work on what the
// session received (workers.go).
//
// Every string a client publishes must be one brokers accept, whatever it
// came from, and every packet is checked before it goes (wirestring.go,
// sendable.go, responsetopic.go): a broker drops a client that sends a
// malformed string, and paho would send the stored packet again at every
// reconnect, keeping the client off the broker for good.
package session
