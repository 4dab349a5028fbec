package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/secret"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// The plugin subcommands that talk to a running host go through its admin
// ops over MQTT, with the client of package host/admin.

func hostFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "broker", Value: "mqtt://" + defaultListen, Usage: "MQTT broker `URL`", EnvVars: []string{"CMDHOST_BROKER"}},
		&cli.StringFlag{Name: "executor", Usage: "executor id of the host (default: the host name)", EnvVars: []string{"CMDHOST_EXECUTOR", "CMDHOST_ID"}},
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the host"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
	}, authFlags()...)
}

// tokenFlags give the host's admin token to the ops that need it: from a
// file or CMDHOST_ADMIN_TOKEN; --token, its value on the command line
// (which ps shows), is kept for compatibility, with a warning.
func tokenFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "token-file", Usage: "`FILE` holding the host's admin token (serve --admin-token-file); or the variable " + envAdminToken, EnvVars: []string{"CMDHOST_ADMIN_TOKEN_FILE"}},
		&cli.StringFlag{Name: "token", Usage: "the admin token itself: shown by ps, kept for compatibility (a warning says so); use --token-file"},
	}
}

// adminToken is the token of c's --token-file, --token or
// CMDHOST_ADMIN_TOKEN; "" when none is given.
func adminToken(c *cli.Context) (string, error) {
	file, tok := c.String("token-file"), c.String("token")
	switch {
	case file != "" && tok != "":
		return "", cli.Exit("--token-file and --token both give the admin token: keep --token-file", exitUsage)
	case file != "":
		t, err := secret.ReadFile(file)
		if err != nil {
			return "", cli.Exit(fmt.Sprintf("--token-file: %v", err), exitUsage)
		}
		return t, nil
	case tok != "":
		fmt.Fprintln(c.App.ErrWriter, "warning: --token shows the token to anyone who can list processes (ps): give it with --token-file FILE or "+envAdminToken+" instead")
		return tok, nil
	}
	return os.Getenv(envAdminToken), nil
}

// adminHost is a connection to the broker for the admin ops of one host.
type adminHost struct {
	broker   *url.URL
	executor string
	client   *admin.Client
}

// dialAdmin connects to the --broker of c for the admin ops of the host
// --executor names, sending token with each (none when ""). Close it.
func dialAdmin(c *cli.Context, token string) (*adminHost, error) {
	u, auth, executor, err := hostTarget(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Context, connectWait)
	defer cancel()
	client, err := admin.Dial(ctx, admin.ClientConfig{Broker: u, Auth: auth, ExecutorID: executor, Token: token})
	if err != nil {
		return nil, connectError(err)
	}
	return &adminHost{broker: u, executor: executor, client: client}, nil
}

func (h *adminHost) Close() { _ = h.client.Close() }

// adminCall runs one admin op on the host the flags name and returns the
// reply's JSON.
func adminCall(c *cli.Context, op string, req any) ([]byte, error) {
	var token string // sent only with the ops that need it
	if op == admin.OpReload || op == admin.OpRemove {
		var err error
		if token, err = adminToken(c); err != nil {
			return nil, err
		}
	}
	h, err := dialAdmin(c, token)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return h.call(c.Context, op, req, c.Duration("timeout"))
}

// call runs one admin op, with req as its JSON payload (none when nil),
// and returns the reply's JSON. It gives up as invoke does (client.go): a
// host that does not acknowledge the op in the ack window is not running.
func (h *adminHost) call(ctx context.Context, op string, req any, timeout time.Duration) ([]byte, error) {
	out, err := h.client.WithTimeout(timeout).Call(ctx, op, req)
	var refused *admin.HostError
	switch {
	case errors.Is(err, admin.ErrNoExecutor):
		return nil, cli.Exit(fmt.Sprintf("no answer from host %q on %s: is `cmdhost serve` running with --id %s there? (--executor, --broker)", h.executor, redact.URL(h.broker), h.executor), exitNoExecutor)
	case errors.Is(err, admin.ErrNoResponse):
		return nil, timedOut(err, rpc.Call{Topic: admin.Topic(h.executor, op), Timeout: timeout, Ack: true})
	case errors.As(err, &refused):
		return nil, cli.Exit(refused, exitFailed)
	case err != nil:
		return nil, err
	}
	return out, nil
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the plugins of a running host, or of a plugins folder offline",
		ArgsUsage: "[DIR]",
		Description: "Without DIR: asks a running host (--broker, --executor) for its plugins.\n" +
			"With DIR: loads the plugins folder offline as serve would (operator files\n" +
			"NAME.json included) and shows each command's execution timeout with the\n" +
			"setting it comes from and its on_timeout policy; --exec-timeout is serve's.\n" +
			"Exit status 1 when a plugin would not be served.",
		Flags: append(hostFlags(), execTimeoutFlag()),
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
			case 1:
				return runListDir(c, c.Args().First())
			default:
				return cli.Exit("list takes at most one plugins folder: cmdhost plugin list [DIR]", 2)
			}
			out, err := adminCall(c, admin.OpList, nil)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if string(bytes.TrimSpace(out)) == "null" { // a host from before it said []
					out = []byte("[]")
				}
				_, err = c.App.Writer.Write(append(out, '\n'))
				return err
			}
			var views []admin.PluginView
			if err := json.Unmarshal(out, &views); err != nil {
				return fmt.Errorf("the host's reply: %w", err)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			// ERRORS counts the calls that failed (trap, timeout, bad
			// reply) and those answered with an error status.
			fmt.Fprintln(tw, "NAME\tSTATE\tDIGEST\tCOMMANDS\tINSTANCES\tCALLS\tERRORS\tP50\tP99\tRELOADS\tLAST ERROR")
			for _, v := range views {
				p50, p99 := "-", "-" // no call of the version serving, no latency
				if v.P99Ms > 0 {
					p50, p99 = fmt.Sprintf("%.2fms", v.P50Ms), fmt.Sprintf("%.2fms", v.P99Ms)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\n", shown(v.Name), v.State, short(v.Digest),
					shown(commandList(v.Commands)), v.Instances, v.Calls, v.Failures+v.ErrorReplies, p50, p99, v.Reloads, orDash(shown(v.LastError)))
			}
			return tw.Flush()
		},
	}
}

// commandList shows up to three command names and how many more there are.
func commandList(cmds []string) string {
	if len(cmds) > 3 {
		return strings.Join(cmds[:3], ",") + fmt.Sprintf(",+%d", len(cmds)-3)
	}
	return orDash(strings.Join(cmds, ","))
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return orDash(digest)
}

func namedOp(name, usage, op string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "NAME",
		Flags: append(hostFlags(), tokenFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit(fmt.Sprintf("%s needs one plugin name: cmdhost plugin %s NAME", name, name), 2)
			}
			out, err := adminCall(c, op, admin.Request{Name: c.Args().First()})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				_, err = c.App.Writer.Write(append(out, '\n'))
				return err
			}
			fmt.Fprintf(c.App.Writer, "%s: %s done\n", c.Args().First(), op)
			return nil
		},
	}
}

func reloadCommand() *cli.Command {
	return namedOp("reload", "reload a plugin of a running host from its file (needs --token-file)", "reload")
}

func removeCommand() *cli.Command {
	return namedOp("remove", "stop serving a plugin of a running host and delete its file (needs --token-file)", "remove")
}

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "validate a module file, copy it into a plugins folder atomically and report the host's verdict",
		ArgsUsage: "FILE.wasm",
		Description: "The module is loaded as the host would and checked against the plugins in DIR\n" +
			"(loaded offline, as plugin list DIR does): a command or topic another plugin\n" +
			"serves refuses it, and nothing is copied. The copy is written to a temporary\n" +
			"file in the folder and renamed into place, so a running host never sees half a\n" +
			"file. Then the host (--broker, --executor) is asked until it serves the new\n" +
			"version or refuses it, for up to --wait: install prints what it saw. Exit\n" +
			"status 1 when refused, 3 or 4 when the host named is not there, 6 when --wait\n" +
			"passed first.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "plugins", Usage: "plugins `DIR` of the host", Required: true, EnvVars: []string{"CMDHOST_PLUGINS"}},
			&cli.StringFlag{Name: "name", Usage: "plugin name (default: the file's base name)"},
		}, verdictFlags()...),
		Action: runInstall,
	}
}

func runInstall(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("install needs one module file: cmdhost plugin install FILE.wasm --plugins DIR", 2)
	}
	src, dir := c.Args().First(), c.String("plugins")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return cli.Exit(fmt.Sprintf("--plugins %s: not a directory", dir), 2)
	}
	e, err := newEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	fmt.Fprintf(c.App.ErrWriter, "validating %s…\n", src)
	folder, closeFolder := folderManager(e, dir, pluginmgr.Defaults{ExecTimeout: pluginmgr.NoTimeout})
	defer closeFolder()
	in, err := installModule(c, e, src, dir, c.String("name"), folder)
	var invalid *invalidModule
	var clash *clashModule
	switch {
	case errors.As(err, &invalid):
		return cli.Exit(fmt.Sprintf("not installed: %v", invalid.err), 1)
	case errors.As(err, &clash):
		return cli.Exit(fmt.Sprintf("not installed: %v", clash), 1)
	case err != nil:
		return err
	}
	fmt.Fprintf(c.App.Writer, "installed %s as %s\n", src, in.dst)
	line, err := hostVerdict(c.Context, c, in.name, in.digest, dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, line)
	return nil
}

// installMode is the mode of a module installed into the plugins folder
// dir: readable by whoever may read the folder (0644 masked by the
// folder's permissions: 0644 in a 0755 folder, 0640 in 0750, 0600 in
// 0700), so that a host running as another user (the systemd unit's
// DynamicUser) can read what an operator installed as root, and no one
// the folder keeps out.
func installMode(dir string) (os.FileMode, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return 0, fmt.Errorf("plugins folder: %w", err)
	}
	return 0o644 & st.Mode().Perm(), nil
}

// invalidModule is installModule's error for a module the host would not
// load.
type invalidModule struct{ err error }

func (e *invalidModule) Error() string { return e.err.Error() }

// installed is a module installModule put into a plugins folder.
type installed struct {
	name     string   // the plugin's name
	dst      string   // its path in the folder
	digest   string   // hex sha256 of its content, as the host's status shows it
	commands []string // the commands it declares
}

// installModule loads the module file src as the host would, checks it
// against the plugins of the folder dir (folder, a folderManager of dir,
// loads them offline: a command or topic another plugin serves there
// refuses it, a *clashModule) and, when all is well, copies it into dir as
// NAME.wasm (name, or the file's base name): written to a temporary file
// in dir and renamed into place, so that a running host never sees half a
// file.
func installModule(c *cli.Context, e *wasm.Engine, src, dir, name string, folder *pluginmgr.Manager) (installed, error) {
	if name == "" {
		name = pluginName(src)
	}
	// The host's own rule: a name it would skip (a dotfile) or a path
	// is refused here rather than installed and never served.
	if err := pluginmgr.CheckName(name); err != nil {
		return installed{}, &invalidModule{fmt.Errorf("%w (choose it with --name)", err)}
	}
	mode, err := installMode(dir)
	if err != nil {
		return installed{}, err
	}
	p, bin, err := loadFile(c, e, src, wasm.PluginConfig{PoolSize: 1})
	if err != nil {
		return installed{}, &invalidModule{err}
	}
	in := installed{name: name, dst: filepath.Join(dir, name+".wasm")}
	for _, cmd := range p.Description().Commands {
		in.commands = append(in.commands, cmd.Name)
	}
	_ = p.Close(context.Background())
	sum := sha256.Sum256(bin)
	in.digest = hex.EncodeToString(sum[:])
	folder.LoadAll(c.Context) // only what changed since the last time (dev)
	if err := checkFolder(c, folder, dir, name, bin); err != nil {
		return installed{}, err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return installed{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(bin); err != nil {
		tmp.Close()
		return installed{}, err
	}
	if err := tmp.Chmod(mode); err != nil { // CreateTemp made it 0600
		tmp.Close()
		return installed{}, err
	}
	if err := tmp.Close(); err != nil {
		return installed{}, err
	}
	if err := os.Rename(tmp.Name(), in.dst); err != nil {
		return installed{}, err
	}
	return in, nil
}
