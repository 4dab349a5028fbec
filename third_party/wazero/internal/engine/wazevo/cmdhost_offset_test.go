package wazevo

import (
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero/internal/engine/wazevo/wazevoapi"
)

// cmdhost: compiled code reads the closed flag's address at this offset of
// the execution context (upstream's wazevo_test.go checks the others).
func TestModuleClosedPtrOffset(t *testing.T) {
	var execCtx executionContext
	if got := wazevoapi.Offset(unsafe.Offsetof(execCtx.moduleClosedPtr)); got != wazevoapi.ExecutionContextOffsetModuleClosedPtr {
		t.Fatalf("moduleClosedPtr is at %d, compiled code reads %d", got, wazevoapi.ExecutionContextOffsetModuleClosedPtr)
	}
}
