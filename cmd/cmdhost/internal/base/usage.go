package base

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// ExitUsage is the exit status of a command line cmdhost cannot parse.
const ExitUsage = 2

// badFlagValue is how urfave/cli words a flag value it cannot parse.
var (
	badFlagValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z-]+): (.*)$`)
	unknownFlag  = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	noFlagValue  = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
)

// UsageError is every command's OnUsageError: one line that names the
// flag, what is wrong and an example, and the command's --help to read
// more, instead of the whole help text after urfave/cli's terse line.
func UsageError(c *cli.Context, err error, _ bool) error {
	path := commandPath(c)
	msg := err.Error()
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		value, flag := m[1], m[2]
		msg = fmt.Sprintf("--%s %s: %s", flag, value, m[3])
		switch FlagOf(c, flag).(type) {
		case *cli.DurationFlag:
			msg = fmt.Sprintf("--%s %s: not a duration: give its unit, e.g. --%s %ss (or 500ms, 2m, 1h)", flag, value, flag, strings.TrimSpace(value))
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
			msg = fmt.Sprintf("--%s %s: not a whole number", flag, value)
		}
	}
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		msg = "unknown flag --" + m[1]
	}
	if m := noFlagValue.FindStringSubmatch(msg); m != nil {
		msg = "--" + m[1] + " needs a value"
	}
	help := strings.Join(slices.DeleteFunc([]string{"cmdhost", path, "--help"}, func(s string) bool { return s == "" }), " ")
	if path != "" {
		msg = path + ": " + msg
	}
	return cli.Exit(fmt.Sprintf("%s (see %s)", msg, help), ExitUsage)
}

// commandPath is the command of c as typed after "cmdhost": "plugin list".
func commandPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	return strings.Join(slices.Compact(names), " ")
}

// FlagOf returns the flag called name of c's command, or nil.
func FlagOf(c *cli.Context, name string) cli.Flag {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// WithUsageErrors sets usageError on cmds and their subcommands, makes a
// command with subcommands refuse an unknown one (unknownCommand) and
// checks required flags itself (requireFlags).
func WithUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = UsageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = subcommandsOnly
		}
		if len(c.Subcommands) > 0 && Find(c.Subcommands, "help") == nil {
			c.Subcommands = append(c.Subcommands, HelpCommand())
		}
		requireFlags(c)
		WithUsageErrors(c.Subcommands)
	}
	return cmds
}

// subcommandsOnly is the action of a command that only groups
// subcommands (plugin): its help without an argument, else the argument
// is no subcommand of it (urfave/cli would take it for a help topic).
func subcommandsOnly(c *cli.Context) error {
	if c.Args().Present() {
		return UnknownCommand(c, c.Args().First())
	}
	return cli.ShowSubcommandHelp(c)
}

// UnknownCommand is the usage error of a command name that c's command
// (or the app) does not have: the name it most likely meant, or the
// names it has, in one line, exit status 2; not the whole help, which
// would scroll the mistake away, and not status 0.
func UnknownCommand(c *cli.Context, name string) error {
	cmds, path := c.App.Commands, commandPath(c)
	if c.Command != nil && path != "" {
		cmds = c.Command.Subcommands
	}
	return unknownCommandAmong(cmds, path, name)
}

// unknownCommandAmong is unknownCommand for name typed after the command
// at path ("" for cmdhost itself), whose subcommands are cmds.
func unknownCommandAmong(cmds []*cli.Command, path, name string) error {
	var names, listed []string // names with aliases, to match; without, to show
	for _, sub := range cmds {
		if !sub.Hidden {
			names = append(names, sub.Names()...)
			listed = append(listed, sub.Name)
		}
	}
	prefix := strings.TrimSpace("cmdhost " + path)
	help := prefix + " --help"
	typed := strings.TrimSpace(path + " " + name)
	if want := Closest(name, names); want != "" {
		return cli.Exit(fmt.Sprintf("unknown command %q: did you mean %q? (see %s)", typed, strings.TrimSpace(path+" "+want), help), ExitUsage)
	}
	return cli.Exit(fmt.Sprintf("unknown command %q: %s has %s (see %s)", typed, prefix, strings.Join(listed, ", "), help), ExitUsage)
}

// requireFlags replaces urfave/cli's check of c's required flags, which
// prints the whole help and exits 1, by one that says in one line which
// flag is missing and what it wants, exit status 2 (a usage error). The
// flags stay required; only the check moves into c's Before.
func requireFlags(c *cli.Command) {
	var required []*cli.StringFlag
	for _, f := range c.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			required = append(required, sf)
		}
	}
	if len(required) == 0 {
		return
	}
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		for _, f := range required {
			if ctx.IsSet(f.Name) {
				continue
			}
			placeholder, usage := UnquoteUsage(f.Usage)
			msg := fmt.Sprintf("%s: --%s %s is required: %s", commandPath(ctx), f.Name, placeholder, usage)
			if len(f.EnvVars) > 0 {
				msg += " (or $" + f.EnvVars[0] + ")"
			}
			return cli.Exit(fmt.Sprintf("%s (see cmdhost %s --help)", msg, commandPath(ctx)), ExitUsage)
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

// UnquoteUsage is a flag's usage text and its placeholder: the word in
// backquotes ("plugins `DIR` of the host" → "DIR", "plugins DIR of the
// host"), as urfave/cli shows them in the help.
func UnquoteUsage(usage string) (placeholder, text string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}

// HelpCommand replaces urfave/cli's `help` command (of cmdhost and of
// each command with subcommands), which answers an unknown topic ("help
// invok") with exit status 3, the status of "no broker": an unknown
// command there is the usage error it is elsewhere. Being named help, it
// keeps urfave/cli from adding its own, and from adding cmdhost's --help
// flag, which newApp therefore adds.
func HelpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, or one command's help",
		ArgsUsage: "[COMMAND]",
		Action: func(c *cli.Context) error {
			parent := c.Lineage()[1] // the command help is a subcommand of
			path := commandPath(parent)
			if !c.Args().Present() {
				if path == "" {
					return cli.ShowAppHelp(parent)
				}
				return cli.ShowSubcommandHelp(parent)
			}
			name := c.Args().First()
			cmds := c.App.Commands
			if path != "" {
				cmds = parent.Command.Subcommands
			}
			if Find(cmds, name) == nil {
				return unknownCommandAmong(cmds, path, name)
			}
			return cli.ShowCommandHelp(parent, name)
		},
	}
}
