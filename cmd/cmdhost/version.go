package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/internal/buildinfo"
	"github.com/cmdhost/cmdhost/internal/redact"
)

// buildVersion is what `cmdhost version` reports (buildinfo.Version).
type buildVersion buildinfo.Version

func readBuildVersion() buildVersion { return buildVersion(buildinfo.Read()) }

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
		Usage: "print the version of this cmdhost binary (with --executor, also a running host's), its commit, Go, wazero and the guest ABI",
		Description: "Reads the build information of the binary it is: a host serving elsewhere,\n" +
			"started from another binary, may be another version. --executor ID asks that\n" +
			"host (on --broker) for its own, from its admin stats, and prints both.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			// No environment variable: a CMDHOST_EXECUTOR set for invoke
			// must not make version need a broker.
			&cli.StringFlag{Name: "executor", Usage: "also ask the running host `ID` (serve --id) for its version"},
			brokersFlag("MQTT broker `URL` of the host (with --executor)", "mqtt://"+defaultListen),
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the host (with --executor)"},
		}, authFlags()...),
		Action: runVersion,
	}
}

// hostVersions is version --executor --json: this binary's and the
// host's.
type hostVersions struct {
	Binary   buildVersion `json:"binary"`
	Executor string       `json:"executor"`
	Host     buildVersion `json:"host"`
}

func runVersion(c *cli.Context) error {
	v := readBuildVersion()
	if fleetSyntax(c.String("executor")) {
		return cli.Exit("version asks one host: --executor takes one id; cmdhost hosts --executor '"+c.String("executor")+"' shows the version of many", exitUsage)
	}
	if !c.IsSet("executor") {
		if c.Bool("json") {
			return json.NewEncoder(c.App.Writer).Encode(v)
		}
		v.print(c.App.Writer)
		return nil
	}
	h, err := dialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	st, err := h.stats(c.Context, c.Duration("timeout"))
	if err != nil {
		return err
	}
	hv := buildVersion(st.Build)
	// What a host sends reaches the terminal without control characters.
	hv.Version, hv.Commit, hv.Go, hv.Wazero = shown(hv.Version), shown(hv.Commit), shown(hv.Go), shown(hv.Wazero)
	if hv.Version == "" {
		return cli.Exit(fmt.Sprintf("host %s answers but does not say its version: it runs a cmdhost older than this one", h.executor), exitFailed)
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(hostVersions{Binary: v, Executor: h.executor, Host: hv})
	}
	fmt.Fprintln(c.App.Writer, "this binary:")
	v.print(c.App.Writer)
	fmt.Fprintf(c.App.Writer, "\nhost %s on %s:\n", shown(h.executor), redact.URL(h.broker))
	hv.print(c.App.Writer)
	return nil
}
