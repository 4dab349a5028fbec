//go:build wasip1

package sdk

import (
	"fmt"
	"unsafe"

	"github.com/cmdhost/cmdhost/abi"
)

// invokeBuf is reused across nested calls: the host copies the invocation
// at once. Each result gets a fresh buffer instead, decoded in place, so a
// handler may keep anything of it.
var invokeBuf []byte

// hostInvoke hands inv to the host, which blocks until the nested calls
// are over, then fetches the result.
func hostInvoke(inv *abi.Invocation) (*abi.InvocationResult, error) {
	invokeBuf = abi.AppendInvocation(invokeBuf[:0], inv)
	n := invokeImport(ptr(invokeBuf), int32(len(invokeBuf)))
	if n < 0 {
		return nil, fmt.Errorf("nested invocation refused by the host: result %d", n)
	}
	out := make([]byte, n)
	if r := invokeResultRead(ptr(out), n); r != n {
		return nil, fmt.Errorf("reading the nested invocation's result: result %d", r)
	}
	return abi.DecodeInvocationResultShared(out)
}

//go:wasmimport cmdhost invoke
func invokeImport(p unsafe.Pointer, n int32) int32

//go:wasmimport cmdhost invoke_result_read
func invokeResultRead(p unsafe.Pointer, n int32) int32
