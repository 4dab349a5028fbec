// Package abi is the contract between cmdhost and the WebAssembly modules
// it runs: the names a module exports and imports, the result codes of the
// host functions, and the byte format of everything that crosses the
// boundary. Both sides build on it (the host in internal/wasm, Go guests in
// package sdk), so it is kept on its own and imports nothing but the
// standard library: a guest pays for no host code, and a change to the
// contract is a change to this package and nothing else. It is a module of
// its own, github.com/cmdhost/cmdhost/abi, with no requirements, so that a
// guest's module graph holds none of the host's dependencies. ABI.md describes
// the same contract for authors in other languages; where the two disagree,
// this package is right.
//
// # Names
//
// A module exports its memory and the functions ExportABIVersion,
// ExportDescribe and ExportHandle, and imports the host functions it needs
// (FnDescribe, FnRequestLen, FnRequestRead, ...) from HostModule. A host
// function reports failure with a negative Result. Version is the ABI
// version: a module built for another one is refused at load.
//
// # Envelopes
//
// Every value that crosses the boundary is an envelope: a flat run of
// records, each a one-byte tag, a little-endian u32 length and the value,
// with no header and no terminator. A decoder skips tags it does not know,
// so new optional records need no new version; a known tag twice, a length
// past the end or a value of the wrong width makes the envelope malformed
// (ErrMalformed). Each message has an Append function that encodes it and a
// Decode function that parses it; a Shared decoder, for guests, returns
// fields that share the input buffer instead of copying it.
//
// # Messages
//
//   - Description (guest to host, at load): the module's commands, each
//     with its content types, idempotency, response TTL and timeout.
//   - Request (host to guest, per call): the payload, its content type,
//     the invoker's user properties, topic tokens, deadline and attempt.
//   - Response (guest to host, per call): the payload, a Status, and the
//     reply's headers and TTL.
//   - Invocation and InvocationResult (nested calls): the commands a handler
//     calls, how long to wait for them (Sync), and each branch's outcome.
//   - HTTPRequest and HTTPResult (outbound HTTP): a request to a granted
//     host, and its response or the reason there is none (HTTPReason).
//
// Decoding only checks the format. The rules a message must follow to be
// used (a command name's characters, statuses a guest may return, limits on
// branches) are checked apart, by Description.Validate, Response.Validate,
// Invocation.Validate, HTTPRequest.Validate and ValidateCommandName, so the host can refuse a
// module or a response with an error that says which rule broke.
package abi
