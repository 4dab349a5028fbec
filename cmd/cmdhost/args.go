package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a leaf command's flags ahead of its positional
// arguments, so `cmdhost call FILE CMD -d hi` works: urfave/cli v2 stops
// parsing flags at the first positional argument. A "--" ends the flags.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	i := 1
	var leaf *cli.Command
	for ; i < len(args); i++ { // global flags and the command path
		a := args[i]
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
			if takesValue(app.Flags, a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		c := find(cmds, a)
		if c == nil {
			break
		}
		out = append(out, a)
		leaf, cmds = c, c.Subcommands
		if len(cmds) == 0 {
			i++
			break
		}
	}
	if leaf == nil {
		return args
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			if takesValue(leaf.Flags, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
	}
	return append(out, positional...)
}

func find(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag in arg (e.g. "-d" or "--timeout")
// takes the next argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
