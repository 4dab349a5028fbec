package base

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
)

// StartProfile writes a CPU profile of the whole run to the file
// CMDHOST_CPUPROFILE names, with the process id appended (several hosts
// of one benchmark profile side by side), when it is set: a development
// aid (make bench-e2e, docs/development.md). The returned stop writes the
// profile out.
func StartProfile() (stop func(), err error) {
	path := os.Getenv("CMDHOST_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path + "." + strconv.Itoa(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("CMDHOST_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("CMDHOST_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
