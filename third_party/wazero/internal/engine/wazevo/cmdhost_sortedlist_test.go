package wazevo

import "testing"

// cmdhost: a deleted compiled module is not kept alive by the sorted
// list's backing array, whichever order modules are deleted in (from the
// end, each delete left the module that was last in the slot beyond the
// list: all of them).
func TestDeletedModulesLeaveTheSortedList(t *testing.T) {
	e := &engine{}
	exec := make([]byte, 3)
	mods := make([]*compiledModule, 3)
	for i := range mods {
		mods[i] = &compiledModule{executables: &executables{executable: exec[i : i+1]}}
		e.addCompiledModuleToSortedList(mods[i])
	}
	for i := len(mods) - 1; i >= 0; i-- {
		e.deleteCompiledModuleFromSortedList(mods[i])
	}
	for i, cm := range e.sortedCompiledModules[:cap(e.sortedCompiledModules)] {
		if cm != nil {
			t.Errorf("slot %d of the sorted list still holds a deleted module", i)
		}
	}
}
