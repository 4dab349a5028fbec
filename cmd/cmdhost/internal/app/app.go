package app

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clientcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/devcmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/plugincmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/servecmd"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/statecmd"
)

// New is cmdhost's app, writing to stdout and stderr: its global flags
// and every command group's commands.
func New(stdout, stderr io.Writer) *cli.App {
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
		Commands: base.WithUsageErrors([]*cli.Command{servecmd.ServeCommand(), clientcmd.InvokeCommand(), clientcmd.PublishCommand(), clientcmd.CallCommand(), plugincmd.PluginCommand(), servecmd.UserCommand(), devcmd.NewCommand(), devcmd.BuildCommand(), clientcmd.VersionCommand(), base.CompletionCommand(), clientcmd.WatchCommand(), devcmd.DevCommand(), clientcmd.HostsCommand(), statecmd.StateCommand(), base.HelpCommand()}),
		// Completion scripts (completion.go) ask the binary what may follow.
		EnableBashCompletion: true,
		OnUsageError:         base.UsageError,
		// --version prints what `cmdhost version` prints; without it and
		// without a command, the help.
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				base.ReadBuildVersion().Print(c.App.Writer)
				return nil
			}
			if c.Args().Present() {
				return base.UnknownCommand(c, c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		// main prints errors and sets the exit status.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}
