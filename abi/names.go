package abi

// Version is the ABI version this package implements. A module reports the
// version it was built for from its ExportABIVersion export; the host refuses
// a module whose version it does not know.
const Version = 1

// Exports a guest module must provide.
const (
	// ExportABIVersion is `() -> i32`: the ABI version the guest speaks.
	ExportABIVersion = "cmdhost_abi_version"
	// ExportDescribe is `() -> i32`: the guest hands its encoded Description
	// to the host with FnDescribe and returns 0.
	ExportDescribe = "cmdhost_describe"
	// ExportHandle is `() -> i32`: the guest runs one request. It fetches the
	// encoded Request with FnRequestLen/FnRequestRead, hands the encoded
	// Response to FnResponseWrite, and returns 0. A non-zero return means the
	// guest could not produce a response at all (a host fault, not a handler
	// error).
	ExportHandle = "cmdhost_handle"
	// ExportMemory is the guest's linear memory; every pointer the guest
	// passes to the host is an offset into it.
	ExportMemory = "memory"
	// ExportInitialize is the WASI reactor initializer. The host calls it
	// once per instance, before anything else, when the module exports it.
	ExportInitialize = "_initialize"
)

// HostModule is the import module name of the host functions below.
const HostModule = "cmdhost"

// Host functions. Every pointer/length pair is an offset and byte count in
// the guest's own memory, both read as unsigned 32-bit; the host copies out
// of it before returning and never keeps a view of it. Functions that
// return i32 return a negative Result on failure.
const (
	// FnDescribe (ptr, len i32) -> i32: hands the encoded Description,
	// which the host decodes and checks at once: ResultInvalid when it is
	// refused (the host logs why). Only valid inside ExportDescribe.
	FnDescribe = "describe"
	// FnRequestLen () -> i32: the byte size of the encoded Request.
	// Only valid inside ExportHandle.
	FnRequestLen = "request_len"
	// FnRequestRead (ptr, cap i32) -> i32: copies the encoded Request into
	// guest memory at ptr and returns its length; ResultTooSmall when cap is
	// smaller than FnRequestLen. (Unlike config_get and var_get, which
	// return the needed length: the guest already knows it here.)
	FnRequestRead = "request_read"
	// FnResponseWrite (ptr, len i32) -> i32: hands the encoded Response. The
	// host copies and validates it at once; the first successful write is
	// the one used, a second one returns ResultState.
	FnResponseWrite = "response_write"
	// FnLog (level, ptr, len i32): a log line in UTF-8 at a Level.
	FnLog = "log"
	// FnConfigGet (kptr, klen, buf, cap i32) -> i32: copies the operator's
	// config value for the key into buf and returns its length;
	// ResultNotFound when the key is not set. When the value is longer than
	// cap, nothing is written and its length is returned: call again with a
	// larger buffer.
	FnConfigGet = "config_get"
	// FnVarGet (kptr, klen, buf, cap i32) -> i32: like FnConfigGet for the
	// plugin's shared variables.
	FnVarGet = "var_get"
	// FnVarSet (kptr, klen, vptr, vlen i32) -> i32: sets a variable (0 on
	// success). ResultLimit when the plugin's variable space is full,
	// ResultTooLarge when the key or value exceeds its bound.
	FnVarSet = "var_set"
	// FnVarAdd (kptr, klen i32, delta i64, out i32) -> i32: adds delta to
	// the variable read as a decimal integer (absent = 0), stores the result
	// and writes it as a little-endian i64 at out. Atomic across all
	// instances of the plugin. ResultNotInteger when the current value is
	// not a decimal integer, ResultTooLarge when the sum overflows i64,
	// ResultInvalid for an empty key.
	FnVarAdd = "var_add"
	// FnInvoke (ptr, len i32) -> i32: runs the encoded Invocation at ptr
	// (nested calls of other commands, local or remote, with a sync rule)
	// and blocks until it completes; returns the length of the encoded
	// InvocationResult, which FnInvokeResultRead copies out. Failures of
	// the invocation itself (invalid, nested invocation unavailable, sync
	// timeout under the fail policy) are reported inside the result, not
	// as a Result code. Only valid inside ExportHandle.
	FnInvoke = "invoke"
	// FnInvokeResultRead (ptr, cap i32) -> i32: copies the encoded
	// InvocationResult of the call's last FnInvoke into guest memory at
	// ptr and returns its length; ResultTooSmall when cap is smaller,
	// ResultState when no invoke ran in this call.
	FnInvokeResultRead = "invoke_result_read"

	// The durable state store (ABI.md section 17). ns is a namespace's
	// name, ns_len 0 for the plugin's own; a shared one must be granted
	// (ResultDenied otherwise). Writes are staged: visible to the call at
	// once, to everyone else when its outcome is recorded. Only valid
	// inside ExportHandle.

	// FnStateGet (ns_ptr, ns_len, key_ptr, key_len, buf, cap, version_out
	// i32) -> i32: the value's length n, written at buf when n <= cap (so
	// cap 0 asks its size), and its version (u64 LE) at version_out;
	// ResultNotFound when there is none.
	FnStateGet = "state_get"
	// FnStateSet (ns_ptr, ns_len, key_ptr, key_len, val_ptr, val_len i32,
	// ttl_ms, if_version i64, flags i32) -> i32: stages key = value,
	// expiring after ttl_ms (0: never), only if the key's version is
	// if_version (0: any) and, with StateIfAbsent in flags, only if it
	// does not exist: ResultConflict otherwise.
	FnStateSet = "state_set"
	// FnStateDelete (ns_ptr, ns_len, key_ptr, key_len i32, if_version
	// i64) -> i32: stages the key's removal: 1 if it exists, 0 if not.
	FnStateDelete = "state_delete"
	// FnStateAdd (ns_ptr, ns_len, key_ptr, key_len i32, delta i64, out
	// i32) -> i32: adds delta to the key read as a decimal integer (absent
	// = 0), stages the sum and writes it (i64 LE) at out.
	FnStateAdd = "state_add"
	// FnStateList (ns_ptr, ns_len, prefix_ptr, prefix_len, after_ptr,
	// after_len, buf, cap i32) -> i32: writes at buf a page of the keys
	// that start with prefix and sort after after (an envelope: one
	// StateListKey record per key, StateListMore when more follow) and
	// returns its length; ResultTooSmall when not even one key fits.
	FnStateList = "state_list"

	// FnPublish (ptr, len i32) -> i32: sends the encoded Message at ptr
	// (ABI.md section 18) to a topic the operator file grants: for a
	// non-idempotent command when the call's outcome is recorded (with
	// its state writes), once; otherwise at once. 0: taken.
	// ResultDenied when no grant covers the topic, ResultInvalid when the
	// message does not decode or breaks the rules, ResultTooLarge over the
	// call's bounds, ResultLimit over the plugin's rate or a full outbox.
	// Only valid inside ExportHandle.
	FnPublish = "publish"

	// FnHTTPRequest (ptr, len i32) -> i32: sends the encoded HTTPRequest
	// at ptr (ABI.md section 19) to a host the operator file grants and
	// blocks until the response is read, the request fails or the call's
	// deadline passes; returns the length of the encoded HTTPResult, which
	// FnHTTPResultRead copies out. Every failure of the request (not
	// granted, DNS, connect, TLS, timeout, too large, over the rate) is
	// reported inside the result, never as a Result code. ResultState:
	// not inside ExportHandle, or the call's own deadline passed (or it
	// was cancelled) during the request.
	FnHTTPRequest = "http_request"
	// FnHTTPResultRead (ptr, cap i32) -> i32: copies the encoded
	// HTTPResult of the call's last FnHTTPRequest into guest memory at ptr
	// and returns its length; ResultTooSmall when cap is smaller,
	// ResultState when no request returned a result in this call.
	FnHTTPResultRead = "http_result_read"
)

// StateIfAbsent is FnStateSet's flag: only if the key does not exist.
const StateIfAbsent = 1

// The records of FnStateList's page.
const (
	StateListKey  = 1 // bytes, repeated: a key, in byte order
	StateListMore = 2 // bool: more keys follow the last (list again after it)
)

// StateListMax is the most keys one FnStateList page holds.
const StateListMax = 256

// Result is the status a host function returns in an i32; non-negative
// values are lengths or 0 for success.
type Result int32

// Host function results.
const (
	ResultOK         Result = 0
	ResultNotFound   Result = -1 // no such key (config, variable or state)
	ResultTooLarge   Result = -2 // a key, value or response exceeds its bound
	ResultLimit      Result = -3 // the plugin's variable space, or a state namespace, is full
	ResultFault      Result = -4 // a pointer/length pair falls outside guest memory
	ResultNotInteger Result = -5 // var_add or state_add on a value that is not a decimal integer
	ResultState      Result = -6 // called where it is not valid (e.g. response_write twice)
	ResultInvalid    Result = -7 // the bytes handed over do not decode
	ResultTooSmall   Result = -8 // the guest's buffer is smaller than the data
	// ResultDenied: the operator file grants no such access (a shared
	// state namespace not granted, or granted read-only to a write).
	ResultDenied Result = -9
	// ResultConflict: a state write's condition does not hold (the key
	// exists, or its version is not the one named).
	ResultConflict Result = -10
	// ResultUnavailable: the state store cannot be reached or written
	// now; nothing was staged.
	ResultUnavailable Result = -11
)

// Level is a log level for FnLog, ordered like log/slog's.
type Level int32

// Log levels.
const (
	LevelDebug Level = -4
	LevelInfo  Level = 0
	LevelWarn  Level = 4
	LevelError Level = 8
)
