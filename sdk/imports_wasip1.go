//go:build wasip1

package sdk

import (
	"unsafe"

	"github.com/cmdhost/cmdhost/abi"
)

// The ABI's exports. The host calls them one at a time per instance.

//go:wasmexport cmdhost_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport cmdhost_describe
func exportDescribe() int32 {
	desc, err := description()
	if err != nil {
		// The host quotes the first error a describe logs in the load
		// error: "cmdhost_describe returned 1: sdk: …".
		hostLog(abi.LevelError, "sdk: "+err.Error())
		return 1
	}
	if r := describe(ptr(desc), int32(len(desc))); r != 0 {
		return 2
	}
	return 0
}

// respBuf is reused across calls: the host copies the response at once.
// Each request gets a fresh buffer instead, decoded in place, so a handler
// may keep anything of its request.
var respBuf []byte

//go:wasmexport cmdhost_handle
func exportHandle() int32 {
	n := requestLen()
	if n < 0 {
		return 1
	}
	reqBuf := make([]byte, n)
	if requestRead(ptr(reqBuf), n) != n {
		return 2
	}
	out, err := dispatch(reqBuf, respBuf[:0])
	if err != nil {
		hostLog(abi.LevelError, err.Error())
		return 3
	}
	respBuf = out
	if r := responseWrite(ptr(out), int32(len(out))); r != 0 {
		hostLog(abi.LevelError, "response refused by the host: "+responseErr(abi.Result(r), len(out)))
		return 4
	}
	return 0
}

//go:wasmimport cmdhost describe
func describe(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost request_len
func requestLen() int32

//go:wasmimport cmdhost request_read
func requestRead(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost response_write
func responseWrite(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost log
func logImport(level int32, p unsafe.Pointer, n int32)

//go:wasmimport cmdhost config_get
func configGet(k unsafe.Pointer, kn int32, buf unsafe.Pointer, cap int32) int32

//go:wasmimport cmdhost var_get
func varGet(k unsafe.Pointer, kn int32, buf unsafe.Pointer, cap int32) int32

//go:wasmimport cmdhost var_set
func varSet(k unsafe.Pointer, kn int32, v unsafe.Pointer, vn int32) int32

//go:wasmimport cmdhost var_add
func varAdd(k unsafe.Pointer, kn int32, delta int64, out unsafe.Pointer) int32

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func str(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

func hostLog(level abi.Level, msg string) { logImport(int32(level), str(msg), int32(len(msg))) }

func hostConfigGet(key string, buf []byte) abi.Result {
	return abi.Result(configGet(str(key), int32(len(key)), ptr(buf), int32(len(buf))))
}

func hostVarGet(key string, buf []byte) abi.Result {
	return abi.Result(varGet(str(key), int32(len(key)), ptr(buf), int32(len(buf))))
}

func hostVarSet(key string, value []byte) abi.Result {
	return abi.Result(varSet(str(key), int32(len(key)), ptr(value), int32(len(value))))
}

func hostVarAdd(key string, delta int64) (int64, abi.Result) {
	var out int64
	r := varAdd(str(key), int32(len(key)), delta, unsafe.Pointer(&out))
	return out, abi.Result(r)
}

//go:wasmimport cmdhost state_get
func stateGet(ns unsafe.Pointer, nsn int32, k unsafe.Pointer, kn int32, buf unsafe.Pointer, cap int32, version unsafe.Pointer) int32

//go:wasmimport cmdhost state_set
func stateSet(ns unsafe.Pointer, nsn int32, k unsafe.Pointer, kn int32, v unsafe.Pointer, vn int32, ttl int64, ifVersion int64, flags int32) int32

//go:wasmimport cmdhost state_delete
func stateDelete(ns unsafe.Pointer, nsn int32, k unsafe.Pointer, kn int32, ifVersion int64) int32

//go:wasmimport cmdhost state_add
func stateAdd(ns unsafe.Pointer, nsn int32, k unsafe.Pointer, kn int32, delta int64, out unsafe.Pointer) int32

//go:wasmimport cmdhost state_list
func stateList(ns unsafe.Pointer, nsn int32, p unsafe.Pointer, pn int32, a unsafe.Pointer, an int32, buf unsafe.Pointer, cap int32) int32

func hostStateGet(ns, key string, buf []byte, version *uint64) abi.Result {
	return abi.Result(stateGet(str(ns), int32(len(ns)), str(key), int32(len(key)), ptr(buf), int32(len(buf)), unsafe.Pointer(version)))
}

func hostStateSet(ns, key string, value []byte, ttl int64, ifVersion uint64, flags int32) abi.Result {
	return abi.Result(stateSet(str(ns), int32(len(ns)), str(key), int32(len(key)), ptr(value), int32(len(value)), ttl, int64(ifVersion), flags))
}

func hostStateDelete(ns, key string, ifVersion uint64) abi.Result {
	return abi.Result(stateDelete(str(ns), int32(len(ns)), str(key), int32(len(key)), int64(ifVersion)))
}

func hostStateAdd(ns, key string, delta int64) (int64, abi.Result) {
	var out int64
	r := stateAdd(str(ns), int32(len(ns)), str(key), int32(len(key)), delta, unsafe.Pointer(&out))
	return out, abi.Result(r)
}

func hostStateList(ns, prefix, after string, buf []byte) abi.Result {
	return abi.Result(stateList(str(ns), int32(len(ns)), str(prefix), int32(len(prefix)), str(after), int32(len(after)), ptr(buf), int32(len(buf))))
}

//go:wasmimport cmdhost publish
func publishImport(p unsafe.Pointer, n int32) int32

func hostPublish(msg []byte) abi.Result { return abi.Result(publishImport(ptr(msg), int32(len(msg)))) }
