package base

import (
	"fmt"
	"io"

	"github.com/cmdhost/cmdhost/internal/buildinfo"
)

// BuildVersion is what `cmdhost version` reports (buildinfo.Version).
type BuildVersion buildinfo.Version

// ReadBuildVersion is this binary's build information.
func ReadBuildVersion() BuildVersion { return BuildVersion(buildinfo.Read()) }

// Print writes v as `cmdhost version` shows it. Its first line is the
// version as `cmdhost hosts` shows it (buildinfo.Version.Short): a
// release's tag, or "dev (COMMIT, DATE)" for a build between releases,
// whose module version Go stamps as a pseudo-version
// (v0.0.0-20261126194512-334c5f878fa2) that says the same less readably;
// --json keeps that one for scripts.
func (v BuildVersion) Print(w io.Writer) {
	commit := v.Commit
	if v.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "cmdhost %s\ncommit  %s\ngo      %s\nwazero  %s\nabi     %d\n", buildinfo.Version(v).Short(), commit, v.Go, v.Wazero, v.ABI)
}
