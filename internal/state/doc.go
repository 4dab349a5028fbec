// Package state is the handlers' durable key-value store: what a command
// changes that must outlast the call (a device's desired configuration, a
// job's status, a counter), and the record of each non-idempotent
// request's outcome, kept in the same place so that the two are written
// together.
//
// Why the outcome lives here: a handler's writes must apply exactly once,
// with its reply. A call's writes are staged in a Txn while it runs (it
// reads its own writes), and become visible only when the call's outcome
// is recorded, in one atomic commit with that outcome. So a redelivered,
// re-sent or replayed request never applies its writes twice (its outcome
// is found, and answered), and a call that traps, times out or is
// cancelled applies none (its Txn is dropped). Conditional writes (only
// if absent, only if the version is still V, an add that read version V)
// are checked again at the commit: a conflict fails the whole commit, and
// the caller decides (the executor runs the call again, a bounded number
// of times).
//
// The Backend interface is what a store must do: read committed values,
// list keys by prefix, commit a batch of conditional writes atomically
// with an optional outcome, and find an outcome again. Disk is the
// embedded default (Pebble, an LSM tree with a write-ahead log, chosen on
// measurement: BENCHMARKS.md "The state store's database"): every commit
// is synced before it returns, and commits that arrive together share one
// sync (group commit, commit.go), so a busy host does not pay one fsync
// per call.
//
// Keys live in namespaces: each plugin has its own, and shared ones are
// granted by the operator (the host decides who may read or write which;
// this package only bounds them). A namespace is bounded in keys and bytes
// (Quota), a key and a value in bytes, the store in total bytes (Limits),
// and a call's staged writes in count and bytes (TxnLimits). Every bound
// is checked when a write is staged and again at the commit.
package state
