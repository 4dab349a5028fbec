package plugincmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func PluginCommand() *cli.Command {
	return &cli.Command{
		Name:  "plugin",
		Usage: "work with plugin module files",
		Subcommands: []*cli.Command{{
			Name:      "inspect",
			Usage:     "load a module file (or oci:// reference) offline and show what it declares and how the host would serve it",
			ArgsUsage: "FILE.wasm|oci://REGISTRY/REPO[:TAG|@sha256:…]",
			Description: "Shows the module's digest, ABI version, capabilities and commands. Each command's\n" +
				"execution timeout is shown with the setting it comes from (the operator file\n" +
				"NAME.json beside the module, per command or per plugin; the module; the host\n" +
				"default, --exec-timeout as serve's) and its on_timeout policy. Then what the\n" +
				"module asks for (its imports: publish, http, state, invoke, config...; its\n" +
				"triggers) beside what the operator file grants, and the key to add for what\n" +
				"is not granted. An invalid operator file is an error, as it is for the host.",
			Flags:  append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}, execTimeoutFlag()}, registry.RegistryFlags()...),
			Action: runInspect,
		}, {
			Name:      "validate",
			Usage:     "load module files (or oci:// references) offline as the host would and report whether each loads",
			ArgsUsage: "FILE.wasm|oci://REGISTRY/REPO[:TAG|@sha256:…]...",
			Description: "Loads each module as the host would (default plugin settings), prints one line\n" +
				"per file as it finishes: its commands, or why the host refuses it. Exit status\n" +
				"1 when any file is invalid. What fails only when called (a bad reply) is not\n" +
				"caught: try it with cmdhost call.",
			Flags:  append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {file, ok, commands, error}"}}, registry.RegistryFlags()...),
			Action: runValidate,
		}, listCommand(), reloadCommand(), removeCommand(), installCommand(), rollbackCommand(), rolloutCommand(), pushCommand(), pullCommand(), signCommand(), keygenCommand()},
	}
}

// execTimeoutFlag is serve's --exec-timeout for the commands that show
// how serve would serve a module: same name, default and variable, so
// that they show the value serve uses.
func execTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "exec-timeout", Value: 10 * time.Second,
		Usage:   "the host's default execution timeout (serve --exec-timeout), shown for the commands it applies to",
		EnvVars: []string{"CMDHOST_EXEC_TIMEOUT"}}
}

// execTimeout returns --exec-timeout, checked.
func execTimeout(c *cli.Context) (time.Duration, error) {
	d := c.Duration("exec-timeout")
	if d < 0 {
		return 0, cli.Exit("--exec-timeout must not be negative", 2)
	}
	return d, nil
}

// inspection is what `plugin inspect` reports.
type inspection struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Size   int    `json:"size"`
	Digest string `json:"digest"`
	// Operator is the operator file applied, "" when there is none.
	Operator     string            `json:"operator,omitempty"`
	ABIVersion   uint32            `json:"abiVersion"`
	Commands     []commandView     `json:"commands"`
	Capabilities []wasm.Capability `json:"capabilities"`
	Imports      []string          `json:"imports"`
	// Reach is what the module asks for beside what the operator file
	// grants (inspectreach.go).
	Reach []reachView `json:"reach,omitempty"`
}

// commandView is a command as the module declares it (Timeout is its
// declared default) and how the host would serve it: the effective
// timeout, its source and the on_timeout policy.
type commandView struct {
	Name         string   `json:"name"`
	Idempotent   bool     `json:"idempotent"`
	ResponseTTL  string   `json:"responseTTL,omitempty"`
	ContentTypes []string `json:"contentTypes,omitempty"`
	Timeout      string   `json:"timeout,omitempty"`
	Topic        string   `json:"topic,omitempty"`
	admin.TimeoutView
}

// newCommandView shows c as it is served.
func newCommandView(c pluginmgr.Command) commandView {
	cmd := c.Declared
	return commandView{
		Name: cmd.Name, Idempotent: cmd.Idempotent, ResponseTTL: duration(cmd.ResponseTTL),
		ContentTypes: cmd.ContentTypes, Timeout: duration(cmd.Timeout), Topic: cmd.Topic,
		TimeoutView: admin.NewTimeoutView(c),
	}
}

// readOperator reads and checks the operator file beside the module file
// path against the module's description, as the host does; nil when there
// is none.
func readOperator(path string, d *abi.Description) (*pluginmgr.Operator, error) {
	opPath := strings.TrimSuffix(path, filepath.Ext(path)) + pluginmgr.OperatorExt
	op, err := pluginmgr.ReadOperator(opPath)
	if err == nil {
		err = op.CheckCommands(d)
	}
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("operator file: %v (the host would not serve the plugin)", err), 1)
	}
	return op, nil
}

func runInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("inspect needs one module file or oci:// reference: cmdhost plugin inspect FILE.wasm", 2)
	}
	hostTimeout, err := execTimeout(c)
	if err != nil {
		return err
	}
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	path, done, err := registry.PulledFile(c, c.Args().First())
	if err != nil {
		return err
	}
	defer done()
	p, bin, err := base.LoadFile(c, e, path, wasm.PluginConfig{PoolSize: 1})
	if err != nil {
		return err
	}
	defer p.Close(context.Background())

	sum := sha256.Sum256(bin)
	d := p.Description()
	op, err := readOperator(path, d)
	if err != nil {
		return err
	}
	in := inspection{
		Name: p.Name(), File: c.Args().First(), Size: len(bin), Digest: "sha256:" + hex.EncodeToString(sum[:]),
		ABIVersion: d.Version, Capabilities: append([]wasm.Capability{}, p.Capabilities()...),
		// A module may import one function under several types: listed once.
		Imports: append([]string{}, slices.Compact(slices.Sorted(slices.Values(p.Imports())))...),
	}
	if op != nil {
		in.Operator = op.File
	}
	in.Reach = reachOf(in.Imports, d, op)
	for _, cmd := range d.Commands {
		in.Commands = append(in.Commands, newCommandView(pluginmgr.Resolve(p.Name(), cmd, op, pluginmgr.Defaults{ExecTimeout: setting.ZeroIsOff(hostTimeout)})))
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	return printInspection(c, in)
}

func printInspection(c *cli.Context, in inspection) error {
	w := c.App.Writer
	fmt.Fprintf(w, "plugin:       %s\nfile:         %s (%d bytes)\ndigest:       %s\nABI version:  %d\n",
		in.Name, in.File, in.Size, in.Digest, in.ABIVersion)
	caps := "none"
	if len(in.Capabilities) > 0 {
		caps = fmt.Sprint(in.Capabilities)
	}
	fmt.Fprintf(w, "capabilities: %s (granted only by the operator)\nimports:      %d\noperator:     %s\n\n",
		caps, len(in.Imports), base.OrNone(in.Operator))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMAND\tIDEMPOTENT\tRESPONSE TTL\tTIMEOUT\tON TIMEOUT\tCONTENT TYPES\tTOPIC")
	for _, cmd := range in.Commands {
		fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\t%s\t%s\n", cmd.Name, cmd.Idempotent, base.OrDash(cmd.ResponseTTL),
			timeoutWithSource(cmd.TimeoutView), timeoutPolicy(cmd.TimeoutView), base.OrAny(cmd.ContentTypes), base.OrDefault(cmd.Topic))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printReach(w, in.Reach, in.Operator)
}

func duration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// validation is what `plugin validate` reports about one file.
type validation struct {
	File     string   `json:"file"`
	OK       bool     `json:"ok"`
	Commands []string `json:"commands"`
	Error    string   `json:"error,omitempty"`
}

func (v validation) String() string {
	if !v.OK {
		return v.File + ": invalid: " + v.Error
	}
	noun := "commands"
	if len(v.Commands) == 1 {
		noun = "command"
	}
	return fmt.Sprintf("%s: ok: %d %s (%s)", v.File, len(v.Commands), noun, strings.Join(v.Commands, ", "))
}

func runValidate(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.Exit("validate needs module files: cmdhost plugin validate FILE.wasm...", 2)
	}
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())

	// Load on all cores, as the host does, and print each file's line as
	// soon as it and the files before it are done, so the output keeps the
	// arguments' order.
	files := c.Args().Slice()
	paths := make([]string, len(files)) // a reference's pulled file
	for i, f := range files {
		path, done, err := registry.PulledFile(c, f)
		if err != nil {
			return err
		}
		defer done()
		paths[i] = path
	}
	results := make([]validation, len(files))
	done := make([]chan struct{}, len(files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, path := range files {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = validateFile(c, e, paths[i])
			if paths[i] != path { // pulled: named by its reference
				results[i].File, results[i].Error = path, strings.ReplaceAll(results[i].Error, paths[i], path)
			}
		}()
	}
	invalid := 0
	for i := range files {
		<-done[i]
		if !results[i].OK {
			invalid++
		}
		if !c.Bool("json") {
			fmt.Fprintln(c.App.Writer, results[i])
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	}
	if invalid > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d module files invalid", invalid, len(files)), 1)
	}
	return nil
}

// validateFile loads one module file with the host's default settings and
// closes it again.
func validateFile(c *cli.Context, e *wasm.Engine, path string) validation {
	v := validation{File: path, Commands: []string{}}
	p, _, err := base.LoadFile(c, e, path, wasm.PluginConfig{})
	if err != nil {
		v.Error = err.Error()
		return v
	}
	defer p.Close(context.Background())
	if err := pluginmgr.CheckTopics(p.Description()); err != nil {
		v.Error = err.Error() // the host would load it and refuse to serve it
		return v
	}
	v.OK = true
	for _, cmd := range p.Description().Commands {
		v.Commands = append(v.Commands, cmd.Name)
	}
	return v
}
