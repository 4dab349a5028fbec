package base

import (
	"fmt"
	"io"

	"github.com/cmdhost/cmdhost/internal/buildinfo"
)

// BuildVersion is what `cmdhost version` reports (buildinfo.Version).
type BuildVersion buildinfo.Version

func ReadBuildVersion() BuildVersion { return BuildVersion(buildinfo.Read()) }

func (v BuildVersion) Print(w io.Writer) {
	commit := v.Commit
	if v.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "cmdhost %s\ncommit  %s\ngo      %s\nwazero  %s\nabi     %d\n", v.Version, commit, v.Go, v.Wazero, v.ABI)
}
