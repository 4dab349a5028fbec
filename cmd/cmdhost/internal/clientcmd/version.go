package clientcmd

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/redact"
)

func VersionCommand() *cli.Command {
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
			hostconn.BrokersFlag("MQTT broker `URL` of the host (with --executor)", "mqtt://"+hostconn.DefaultListen),
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the host (with --executor)"},
		}, hostconn.AuthFlags()...),
		Action: runVersion,
	}
}

// hostVersions is version --executor --json: this binary's and the
// host's.
type hostVersions struct {
	Binary   base.BuildVersion `json:"binary"`
	Executor string            `json:"executor"`
	Host     base.BuildVersion `json:"host"`
}

func runVersion(c *cli.Context) error {
	v := base.ReadBuildVersion()
	if hostconn.FleetSyntax(c.String("executor")) {
		return cli.Exit("version asks one host: --executor takes one id; cmdhost hosts --executor '"+c.String("executor")+"' shows the version of many", base.ExitUsage)
	}
	if !c.IsSet("executor") {
		if c.Bool("json") {
			return json.NewEncoder(c.App.Writer).Encode(v)
		}
		v.Print(c.App.Writer)
		return nil
	}
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	st, err := h.Stats(c.Context, c.Duration("timeout"))
	if err != nil {
		return err
	}
	hv := base.BuildVersion(st.Build)
	// What a host sends reaches the terminal without control characters.
	hv.Version, hv.Commit, hv.Go, hv.Wazero = base.Shown(hv.Version), base.Shown(hv.Commit), base.Shown(hv.Go), base.Shown(hv.Wazero)
	if hv.Version == "" {
		return cli.Exit(fmt.Sprintf("host %s answers but does not say its version: it runs a cmdhost older than this one", h.Executor), base.ExitFailed)
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(hostVersions{Binary: v, Executor: h.Executor, Host: hv})
	}
	fmt.Fprintln(c.App.Writer, "this binary:")
	v.Print(c.App.Writer)
	fmt.Fprintf(c.App.Writer, "\nhost %s on %s:\n", base.Shown(h.Executor), redact.URL(h.Broker))
	hv.Print(c.App.Writer)
	return nil
}
