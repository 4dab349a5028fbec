// Package buildinfo reads what a cmdhost binary was built from, for
// `cmdhost version` and for a running host's admin stats: both are the
// same binary's, read in one place so that they cannot disagree.
package buildinfo

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

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
	// Time is the commit's time (RFC 3339), "" when not known.
	Time   string `json:"time,omitempty"`
	Go     string `json:"go"`
	Wazero string `json:"wazero"`
	ABI    uint32 `json:"abi"`
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
		case "vcs.time":
			v.Time = s.Value
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

// pseudo is a Go pseudo-version's tail: the commit's time and its
// 12-digit hash, "+dirty" for a build with uncommitted changes.
var pseudo = regexp.MustCompile(`-(?:0\.)?(\d{14})-([0-9a-f]{12})(\+dirty)?$`)

// Short is the version as a person reads it in a table: a release's tag
// (v1.2.0), or for any other build "dev" with its commit's short hash and
// date, "dev (334c5f8, 2026-11-26)", rather than the pseudo-version Go
// stamps (v0.0.0-20261126194512-334c5f878fa2); ", modified" when it was
// built with uncommitted changes.
func (v Version) Short() string {
	modified := ""
	if v.Modified || strings.HasSuffix(v.Version, "+dirty") {
		modified = ", modified"
	}
	if m := pseudo.FindStringSubmatch(v.Version); m != nil {
		day, _ := time.Parse("20060102150405", m[1])
		return "dev (" + m[2][:7] + ", " + day.Format(time.DateOnly) + modified + ")"
	}
	if strings.HasPrefix(v.Version, "v") {
		return strings.TrimSuffix(v.Version, "+dirty") + strings.ReplaceAll(modified, ", ", " ")
	}
	// (devel), or a build without its information: the commit, if known.
	var known []string
	if len(v.Commit) >= 7 && v.Commit != "(unknown)" {
		known = append(known, v.Commit[:7])
	}
	if t, err := time.Parse(time.RFC3339, v.Time); err == nil {
		known = append(known, t.UTC().Format(time.DateOnly))
	}
	if len(known) == 0 && modified == "" {
		return "dev"
	}
	return "dev (" + strings.Join(known, ", ") + modified + ")"
}
