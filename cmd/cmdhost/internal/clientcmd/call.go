package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

func CallCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "run one command of a module file (or oci:// reference) locally, without a broker",
		ArgsUsage: "FILE.wasm|oci://REGISTRY/REPO[:TAG|@sha256:…] COMMAND",
		Description: "Loads the module as the host would, runs COMMAND once and prints the reply's\n" +
			"payload. An error status is printed to stderr with exit status 1.\n\n" +
			"The call has a state store, as in a host: its writes commit when it answers below\n" +
			"400. By default the store is the call's own and starts empty; --state-dir DIR keeps\n" +
			"it in DIR between calls, --state-dir off runs without one.",
		Flags: append(append(requestFlags("deadline of the call", base.DefaultExecTimeout),
			&cli.StringSliceFlag{Name: "config", Usage: "plugin config `key=value` (repeatable)"},
			&cli.UintFlag{Name: "memory-pages", Value: 1024, Usage: "memory limit in 64 KiB pages"},
			&cli.Int64Flag{Name: "fuel", Usage: "budget of work units for the call (0: none); prints to stderr what the call used, to size \"fuel\" in an operator file"},
			callStateFlag(),
		), registry.RegistryFlags()...),
		Action: runCall,
	}
}

func runCall(c *cli.Context) error {
	if c.NArg() != 2 {
		return cli.Exit("call needs a module file and a command: cmdhost call FILE.wasm COMMAND", 2)
	}
	req := &abi.Request{Command: c.Args().Get(1), ContentType: c.String("content-type")}
	var err error
	if req.Payload, err = payload(c); err != nil {
		return cli.Exit(err, 2)
	}
	if req.Metadata, err = keyValues("meta", c.StringSlice("meta")); err != nil {
		return cli.Exit(err, 2)
	}
	config, err := keyValues("config", c.StringSlice("config"))
	if err != nil {
		return cli.Exit(err, 2)
	}
	if c.Duration("timeout") <= 0 {
		return cli.Exit("--timeout must be positive, e.g. --timeout 5s", 2)
	}
	if c.Int64("fuel") < 0 {
		return cli.Exit("--fuel must be 0 (no budget) or a number of units, e.g. --fuel 1000000", 2)
	}

	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	path, done, err := registry.PulledFile(c, c.Args().Get(0))
	if err != nil {
		return err
	}
	defer done()
	p, _, err := base.LoadFile(c, e, path, wasm.PluginConfig{
		PoolSize: 1, MemoryPages: uint32(c.Uint("memory-pages")), Config: config, Fuel: c.Int64("fuel"), CountFuel: c.IsSet("fuel"),
	})
	if err != nil {
		return err
	}
	defer p.Close(context.Background())
	if err := servesCommand(c.Args().Get(0), p.Description(), req.Command); err != nil {
		return err
	}
	store, err := openCallStore(c)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	var tx *state.Txn // the call's writes, staged (callstate.go)
	if store != nil {
		defer store.Close()
		tx = state.NewTxn(store, state.Limits{}, time.Now)
		ctx = state.WithTxn(ctx, tx)
	}
	resp, err := p.Invoke(ctx, req)
	if c.IsSet("fuel") {
		printFuel(c.App.ErrWriter, p.Stats().Fuel.Last, c.Int64("fuel"))
	}
	var fuel *wasm.FuelError
	if errors.As(err, &fuel) {
		// The budget is --fuel's (call reads no operator file), not the
		// "fuel" of an operator file that the error names for a host.
		return cli.Exit(fmt.Sprintf("command %s: fuel exhausted: the call used %d units of fuel, its budget is %d, from --fuel: raise --fuel (--fuel 0: no budget)",
			req.Command, fuel.Used, fuel.Budget), base.ExitFailed)
	}
	if err != nil {
		return err
	}
	res := &rpc.Result{Status: resp.Code(), Message: resp.Message, AppError: resp.AppError,
		PropName: resp.PropName, PropValue: resp.PropValue}
	if err := res.Err(); err != nil { // an error reply: its writes are dropped
		return cli.Exit(err, 1)
	}
	if tx != nil {
		if _, err := tx.Commit(context.Background(), nil, 0); err != nil {
			return cli.Exit(fmt.Sprintf("the call answered %d, but its state writes were not committed: %v; nothing was written", resp.Code(), err), base.ExitFailed)
		}
	}
	return base.WritePayload(c.App.Writer, resp.Payload) // a newline after it on a terminal, as invoke
}

// printFuel writes what a call used of its fuel budget (0: none).
func printFuel(w io.Writer, used, budget int64) {
	if budget > 0 {
		fmt.Fprintf(w, "fuel: %d units used, budget %d\n", used, budget)
		return
	}
	fmt.Fprintf(w, "fuel: %d units used\n", used)
}

// servesCommand says, when the module in file does not serve command,
// which commands it does serve (and the one most likely meant), rather
// than the guest's bare "unknown command".
func servesCommand(file string, desc *abi.Description, command string) error {
	var names []string
	for _, cmd := range desc.Commands {
		if cmd.Name == command {
			return nil
		}
		names = append(names, cmd.Name)
	}
	msg := fmt.Sprintf("unknown command %q: %s serves %s", command, file, strings.Join(names, ", "))
	if want := base.Closest(command, names); want != "" {
		msg = fmt.Sprintf("unknown command %q: did you mean %q? (%s serves %s)", command, want, file, strings.Join(names, ", "))
	}
	return cli.Exit(msg, base.ExitFailed)
}

// defaultInvokeTimeout is invoke's default --timeout: longer than a
// host's default execution timeout, so that a command that runs too long
// ends with the host's answer (408, the command and its timeout named)
// rather than the client giving up a moment before it comes (exit 6).
const defaultInvokeTimeout = base.DefaultExecTimeout + 5*time.Second

// requestFlags are the flags of a request's content, shared by call and
// invoke.
func requestFlags(timeoutUsage string, timeoutDefault time.Duration) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data", Aliases: []string{"d"}, Usage: "request payload"},
		&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the request payload from `FILE` (- for stdin)"},
		&cli.StringFlag{Name: "content-type", Value: "text/plain", Usage: "request content type"},
		&cli.DurationFlag{Name: "timeout", Value: timeoutDefault, Usage: timeoutUsage, EnvVars: []string{"CMDHOST_TIMEOUT"}},
		&cli.StringSliceFlag{Name: "meta", Usage: "request metadata `key=value` (repeatable)"},
	}
}

// payload reads the request payload from --data or --file.
func payload(c *cli.Context) ([]byte, error) {
	switch {
	case c.IsSet("data") && c.IsSet("file"):
		return nil, fmt.Errorf("give the payload with -d or -f, not both")
	case c.IsSet("file") && c.String("file") == "-":
		return io.ReadAll(os.Stdin)
	case c.IsSet("file"):
		return os.ReadFile(c.String("file"))
	}
	return []byte(c.String("data")), nil
}

// keyValues parses repeated key=value flags.
func keyValues(flag string, pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s wants key=value, got %q", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}
