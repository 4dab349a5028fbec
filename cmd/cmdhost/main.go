// Command cmdhost runs command handlers that are WebAssembly modules.
//
// The subcommands here are thin: each parses flags into the config of a
// package that owns the logic (internal/wasm for running modules).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

func main() {
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmdhost:", err)
		os.Exit(1)
	}
	cli.HelpPrinter = printHelp // urfave/cli's package variable: set once, here
	app := newApp(os.Stdout, os.Stderr)
	args, err := interspersed(app, os.Args)
	if err == nil {
		err = app.Run(args)
	}
	stopProfile()
	if err != nil {
		var exit cli.ExitCoder
		if errors.As(err, &exit) {
			if msg := exit.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "cmdhost:", msg)
			}
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "cmdhost:", err)
		os.Exit(1)
	}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "cmdhost",
		Usage:     "run command handlers that are WebAssembly modules",
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "cache-dir",
				Usage:   "directory of the compiled-module cache (default: the user cache dir)",
				EnvVars: []string{"CMDHOST_CACHE_DIR"},
			},
			&cli.BoolFlag{Name: "version", Usage: "print the version, as the version command does"},
			cli.HelpFlag, // urfave/cli adds it only with its own help command (helpCommand)
		},
		Commands: withUsageErrors([]*cli.Command{serveCommand(), invokeCommand(), publishCommand(), callCommand(), pluginCommand(), userCommand(), newCommand(), buildCommand(), versionCommand(), completionCommand(), watchCommand(), devCommand(), hostsCommand(), stateCommand(), helpCommand()}),
		// Completion scripts (completion.go) ask the binary what may follow.
		EnableBashCompletion: true,
		OnUsageError:         usageError,
		// --version prints what `cmdhost version` prints; without it and
		// without a command, the help.
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				readBuildVersion().print(c.App.Writer)
				return nil
			}
			if c.Args().Present() {
				return unknownCommand(c, c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		// main prints errors and sets the exit status.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}
