package servecmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/passwd"
	"github.com/cmdhost/cmdhost/internal/secret"
)

// UserCommand manages the embedded broker's users file (serve --users).
// A password is never a flag's value (it would show in `ps`): it comes
// from --password-file, a prompt without echo on a terminal, or the
// first line of standard input.
func UserCommand() *cli.Command {
	usersFlag := func() cli.Flag {
		return &cli.StringFlag{Name: "users", Required: true, Usage: "the embedded broker's users `FILE` (serve --users); add makes it, mode 0600", EnvVars: []string{"CMDHOST_USERS"}}
	}
	return &cli.Command{
		Name:  "user",
		Usage: "add and remove the users of the embedded broker (serve --users FILE)",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add a user, or change its password",
				ArgsUsage: "NAME",
				Description: "The password comes from --password-file, else a prompt (without echo) on a terminal,\n" +
					"else the first line of standard input. The file keeps a bcrypt hash of it, never the\n" +
					"password; a running serve reads the change at the next CONNECT.",
				Flags: []cli.Flag{usersFlag(),
					&cli.StringFlag{Name: "password-file", Usage: "read the password from `FILE` (one line)"}},
				Action: userAdd,
			},
			{
				Name:      "remove",
				Usage:     "remove a user (its clients already connected stay until they reconnect)",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{usersFlag()},
				Action:    userRemove,
			},
		},
	}
}

// userName is the command's one argument, NAME.
func userName(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", cli.Exit(fmt.Sprintf("cmdhost user %s NAME --users FILE: give one user name (got %d arguments)", c.Command.Name, c.NArg()), base.ExitUsage)
	}
	name := c.Args().First()
	if err := passwd.CheckName(name); err != nil {
		return "", cli.Exit(err.Error()+": a user name is one word without a colon", base.ExitUsage)
	}
	return name, nil
}

func userAdd(c *cli.Context) error {
	name, err := userName(c)
	if err != nil {
		return err
	}
	password, err := newPassword(c, name)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	path := c.String("users")
	if err := passwd.Set(path, name, password); err != nil {
		return cli.Exit(fmt.Errorf("user add %s: %w", name, err), base.ExitUsage)
	}
	fmt.Fprintf(c.App.ErrWriter, "user %s set in %s\n", name, path)
	return nil
}

func userRemove(c *cli.Context) error {
	name, err := userName(c)
	if err != nil {
		return err
	}
	path := c.String("users")
	found, err := passwd.Remove(path, name)
	if err != nil {
		return cli.Exit(fmt.Errorf("user remove %s: %w", name, err), base.ExitUsage)
	}
	if !found {
		return cli.Exit(fmt.Sprintf("user remove: no user %s in %s", name, path), base.ExitUsage)
	}
	fmt.Fprintf(c.App.ErrWriter, "user %s removed from %s\n", name, path)
	return nil
}

// newPassword reads the new password: --password-file, a terminal prompt
// without echo (asked twice), or standard input's first line.
func newPassword(c *cli.Context, name string) (string, error) {
	if f := c.String("password-file"); f != "" {
		pw, err := secret.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("--password-file: %w", err)
		}
		return pw, nil
	}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		fmt.Fprintf(c.App.ErrWriter, "Password for %s: ", name)
		pw, err := term.ReadPassword(fd)
		fmt.Fprintln(c.App.ErrWriter)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		fmt.Fprint(c.App.ErrWriter, "Again: ")
		again, err := term.ReadPassword(fd)
		fmt.Fprintln(c.App.ErrWriter)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		if string(pw) != string(again) {
			return "", errors.New("the two passwords differ: nothing changed")
		}
		if len(pw) == 0 {
			return "", errors.New("empty password: nothing changed")
		}
		return string(pw), nil
	}
	line, err := bufio.NewReader(io.LimitReader(os.Stdin, secret.MaxBytes)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if pw == "" {
		return "", errors.New("no password: give it on standard input (one line), at the prompt of a terminal, or with --password-file FILE")
	}
	return pw, nil
}
