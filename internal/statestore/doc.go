// Package statestore serves the Azure IoT Operations state store
// protocol (docs/state.md "The Azure IoT Operations state store
// protocol", PROTOCOL.md) over the host's state store, so that an
// application built on an Azure SDK's state store client and a plugin
// share keys.
//
// The protocol is RPC with RESP3 payloads: requests on Topic, each an
// array of bulk strings (SET, GET, DEL, VDEL, KEYNOTIFY), replies of
// status 200 whatever the outcome, an error included (`-ERR <message>`),
// with the key's version as the reply's __ts. The Server answers as a
// raw command of the host's executor (rpc.Command.Raw), so that the
// envelope's rules (correlation data, expiry, protocol version, dedup: a
// duplicate is answered the first reply and not applied twice) are the
// ones every cmdhost command gets.
//
// Keys: the protocol's flat key space maps onto the store's namespaces
// (state.ProtocolKey): plugin/NAME/KEY is a plugin's key, shared/NAME/KEY
// a shared namespace's, any other key lives in namespace "aio". Versions
// are the store's (hybrid clock readings), written as HLCs,
// %015d:%05d:NODE; a write's version is later than its request's __ts
// (state.Commit.After). Fencing tokens (__ft) are the store's
// (state.Op.Fence).
//
// Notifications (KEYNOTIFY): a client registers for a key; every change
// of the key (a SET, a DEL, a VDEL that matched, its expiry: the store's
// observers, state.Disk.Observe) is published, in order per key, to the
// client's notify topic (NotifyTopic), through a bounded queue that never
// holds up the store's writer. The Azure SDKs for Go and .NET hold no
// subscription that matches that topic, so the embedded broker
// subscribes the registering client to its notify topics itself
// (Config.Reach); registrations end when the client disconnects
// (Server.ClientGone).
package statestore
