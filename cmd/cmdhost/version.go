package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
)

// buildVersion is what `cmdhost version` reports: read from the build
// information Go embeds in every binary (the module version, the commit
// of a build from a git checkout, the wazero it was built with), so that
// nothing has to be set at release time for it to be right.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Wazero   string `json:"wazero"`
	ABI      uint32 `json:"abi"`
}

func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(unknown)", Commit: "(unknown)", Go: "(unknown)", Wazero: "(unknown)", ABI: abi.Version}
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

func (v buildVersion) print(w io.Writer) {
	commit := v.Commit
	if v.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "cmdhost %s\ncommit  %s\ngo      %s\nwazero  %s\nabi     %d\n", v.Version, commit, v.Go, v.Wazero, v.ABI)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version of this cmdhost binary, its commit, Go, wazero and the guest ABI",
		Description: "Reads the build information of the binary it is: a host serving elsewhere,\n" +
			"started from another binary, may be another version.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object"}},
		Action: func(c *cli.Context) error {
			v := readBuildVersion()
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				return enc.Encode(v)
			}
			v.print(c.App.Writer)
			return nil
		},
	}
}
