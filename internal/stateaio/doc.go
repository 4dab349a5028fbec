// Package stateaio keeps the handlers' state in the state store of an
// Azure IoT Operations broker (serve --state aio): a state.Backend that
// speaks the broker's state store protocol as a client, as the Azure
// SDKs' state store clients speak it (requests on statestore.Topic,
// RESP3 arrays of bulk strings, __ts on every request, __ft fencing
// tokens, a key's version read from the reply's __ts). cmdhost's
// embedded broker serves the same protocol (package statestore), and a
// key's name is the one a plugin's key has there (state.ProtocolKeyOf:
// plugin/NAME/KEY, shared/NAME/KEY, or the key itself for namespace
// aio), so that SDK applications and plugins share keys either way.
//
// The protocol has less than state.Backend asks for. What it lacks is
// refused, with an error that names the limit (LimitError, wrapping
// state.ErrInvalid; a Txn learns it as the write is staged, through
// state.OpChecker), never emulated unsoundly:
//
//   - No compare-and-set. A write only if the key's version is V (the
//     SDKs' IfVersion, and so an add to a key that exists, which writes
//     only if the version it read still stands) is refused. Fencing
//     tokens cannot stand in for it: a token equal to the key's passes,
//     so two writers that read one version would both write. Only if
//     absent is SET NX, only if absent or holding the value written is
//     SET NEX, a delete only if the key holds a value is VDEL; a set
//     conditioned on another value has no request.
//   - No transactions. A commit applies its writes one request after
//     another. It may hold one conditional write, which goes first, so
//     that a condition that does not hold leaves nothing applied (the
//     executor runs the call again, as on any store). A later write the
//     broker refuses (a fence, its quota or ACL) or does not answer leaves
//     the writes before it applied: PartialError, state.ErrUnknown (the
//     request is answered 500 outcome unknown, never run again).
//   - No SCAN: List is refused.
//   - No usage: Usage is zero, so a namespace's quota is not counted
//     beyond a call's own writes (the store's per-call bounds hold); the
//     broker's own quota answers `the quota has been exceeded`
//     (state.ErrQuota).
//   - A GET does not return a key's expiry nor its fence (Item.Expires
//     and Item.Fence are zero), and a SET does not say whether the key
//     existed (Result.Existed is false but for a delete).
//
// Outcomes. The broker's store cannot commit a request's outcome with
// its writes, so the outcomes of non-idempotent requests (and the outbox
// of the messages they publish) are kept on the host's disk
// (Config.Outcomes, the state folder), around the writes: before the
// first write a record that the commit began, after the last the
// outcome. A request whose outcome is found is answered it; one whose
// commit began and never ended (the host was killed between, or the
// broker stopped answering) is answered 500 outcome unknown and never
// run again (Outcome returns state.ErrUnknown; a second commit under the
// same outcome is refused). So a request's writes apply at most once
// through a kill -9, and exactly once unless the host dies, or the
// broker stops answering, while they are applied.
package stateaio
