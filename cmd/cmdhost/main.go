// Command cmdhost runs command handlers that are WebAssembly modules.
//
// It is laid out as the go command is: this main runs the command tree of
// internal/app, whose commands live in a package per command group
// (internal/servecmd, clientcmd, plugincmd, statecmd, devcmd) over what
// they share (internal/base, hostconn, registry). The commands are thin:
// each parses flags into the config of a package that owns the logic
// (host for serve, internal/wasm for running modules).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/app"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
)

func main() {
	stopProfile, err := base.StartProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmdhost:", err)
		os.Exit(1)
	}
	cli.HelpPrinter = base.PrintHelp // urfave/cli's package variable: set once, here
	app := app.New(os.Stdout, os.Stderr)
	args, err := base.Interspersed(app, os.Args)
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
