package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// exitUsage is the exit status of a command line cmdhost cannot parse.
const exitUsage = 2

// badFlagValue is how urfave/cli words a flag value it cannot parse.
var (
	badFlagValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z-]+): (.*)$`)
	unknownFlag  = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
)

// usageError is every command's OnUsageError: one line that names the
// flag, what is wrong and an example, and the command's --help to read
// more, instead of the whole help text after urfave/cli's terse line.
func usageError(c *cli.Context, err error, _ bool) error {
	path := commandPath(c)
	msg := err.Error()
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		value, flag := m[1], m[2]
		msg = fmt.Sprintf("--%s %s: %s", flag, value, m[3])
		switch flagOf(c, flag).(type) {
		case *cli.DurationFlag:
			msg = fmt.Sprintf("--%s %s: not a duration: give its unit, e.g. --%s %ss (or 500ms, 2m, 1h)", flag, value, flag, strings.TrimSpace(value))
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
			msg = fmt.Sprintf("--%s %s: not a whole number", flag, value)
		}
	}
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		msg = "unknown flag --" + m[1]
	}
	help := strings.Join(slices.DeleteFunc([]string{"cmdhost", path, "--help"}, func(s string) bool { return s == "" }), " ")
	if path != "" {
		msg = path + ": " + msg
	}
	return cli.Exit(fmt.Sprintf("%s (see %s)", msg, help), exitUsage)
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

// flagOf returns the flag called name of c's command, or nil.
func flagOf(c *cli.Context, name string) cli.Flag {
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

// withUsageErrors sets usageError on cmds and their subcommands.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = usageError
		withUsageErrors(c.Subcommands)
	}
	return cmds
}
