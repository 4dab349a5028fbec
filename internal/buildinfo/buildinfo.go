// Package buildinfo reads what a cmdhost binary was built from, for
// `cmdhost version` and for a running host's admin stats: both are the
// same binary's, read in one place so that they cannot disagree.
package buildinfo

import (
	"runtime/debug"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// Version is read from the build information Go embeds in every binary
// (the module version, the commit of a build from a git checkout, the
// wazero it was built with), so that nothing has to be set at release
// time for it to be right.
type Version struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Wazero   string `json:"wazero"`
	ABI      uint32 `json:"abi"`
}

// Read returns the running binary's Version; it never changes, so it is
// read once.
var Read = sync.OnceValue(read)

func read() Version {
	v := Version{Version: "(unknown)", Commit: "(unknown)", Go: "(unknown)", Wazero: "(unknown)", ABI: abi.Version}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Version, v.Go = info.Main.Version, info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range info.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			v.Wazero = d.Version
		}
	}
	return v
}
