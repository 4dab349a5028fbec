package base

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Interspersed moves a leaf command's flags ahead of its positional
// arguments, so `cmdhost call FILE CMD -d hi` works: urfave/cli v2 stops
// parsing flags at the first positional argument. A "--" ends the flags.
// A flag that takes a value but ends the line is a usage error: moved
// ahead of the "--" that precedes the positional arguments, it would take
// "--" for its value (`invoke echo -d` sent the payload "--"). A word
// that is no command is left where it is, for unknownCommand to name.
func Interspersed(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := []string{args[0]}
	cmds := app.Commands
	i := 1
	var leaf *cli.Command
	var path []string          // the command's names as typed
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
		c := Find(cmds, a)
		if c == nil {
			if leaf != nil && len(cmds) > 0 {
				return args, nil // not a subcommand of leaf: unknownCommand says so
			}
			break
		}
		out = append(out, a)
		path = append(path, a)
		leaf, cmds = c, c.Subcommands
		if len(cmds) == 0 {
			i++
			break
		}
	}
	if leaf == nil {
		return args, nil
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
			if takesValue(leaf.Flags, a) {
				if i+1 == len(args) {
					return nil, missingValue(path, leaf.Flags, a)
				}
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
	return append(out, positional...), nil
}

// missingValue is the usage error of flag arg of the command at path
// (its names after "cmdhost") given last, without its value.
func missingValue(path []string, flags []cli.Flag, arg string) error {
	cmd := strings.Join(path, " ")
	name := strings.TrimLeft(arg, "-")
	msg := fmt.Sprintf("%s: %s needs a value", cmd, arg)
	if f := flagNamed(flags, name); f != nil {
		if long := f.Names()[0]; long != name {
			msg = fmt.Sprintf("%s: %s (--%s) needs a value", cmd, arg, long)
		}
		if u, ok := f.(cli.DocGenerationFlag); ok && u.GetUsage() != "" {
			_, usage := UnquoteUsage(u.GetUsage())
			msg += ": " + usage
		}
	}
	return cli.Exit(fmt.Sprintf("%s (see cmdhost %s --help)", msg, cmd), ExitUsage)
}

func Find(cmds []*cli.Command, name string) *cli.Command {
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
	f := flagNamed(flags, name)
	_, isBool := f.(*cli.BoolFlag)
	return f != nil && !isBool
}

// flagNamed is the flag of flags called name, or nil.
func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
