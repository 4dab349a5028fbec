package plugincmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func namedOp(name, usage, op string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "NAME",
		Flags: append(hostconn.HostFlags(), hostconn.TokenFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit(fmt.Sprintf("%s needs one plugin name: cmdhost plugin %s NAME", name, name), 2)
			}
			if hostconn.FleetSyntax(c.String("executor")) {
				return namedOpOnHosts(c, op)
			}
			out, err := hostconn.AdminCall(c, op, admin.Request{Name: c.Args().First()})
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
	return namedOp("remove", "stop serving a plugin of a running host and delete its file, or clear one that failed (needs --token-file)", "remove")
}

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install a module on running hosts over MQTT (--executor), or into a plugins folder (--plugins), and report each host's verdict",
		ArgsUsage: "FILE.wasm|oci://REGISTRY/REPO[:TAG|@sha256:…]",
		Description: "The module is a file, or is pulled from an OCI registry (oci://…; see plugin push\n" +
			"and the --registry-* flags). Without --plugins: the module is sent to each host --executor names (an id, or\n" +
			"ids and glob patterns separated by commas: every replica of a share group) over\n" +
			"the admin ops (needs --token-file); each host loads it and answers with its\n" +
			"verdict: served, with its digest and commands, or refused, with its reason (a\n" +
			"command another plugin serves, a module that does not load), the version\n" +
			"serving before going on. A host keeps the version it replaced (cmdhost plugin\n" +
			"rollback). Exit status 1 when any host refused it.\n\n" +
			"With --plugins DIR: the module is loaded as the host would and checked against the plugins in DIR\n" +
			"(loaded offline, as plugin list DIR does): a command or topic another plugin\n" +
			"serves refuses it, and nothing is copied. The copy is written to a temporary\n" +
			"file in the folder and renamed into place, so a running host never sees half a\n" +
			"file. Then the host (--broker, --executor) is asked until it serves the new\n" +
			"version or refuses it, for up to --wait: install prints what it saw. Exit\n" +
			"status 1 when refused, 3 or 4 when the host named is not there, 6 when --wait\n" +
			"passed first.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "plugins", Usage: "plugins `DIR` of the host to copy the module into (default: send it to the hosts --executor names)", EnvVars: []string{"CMDHOST_PLUGINS"}},
			&cli.StringFlag{Name: "name", Usage: "plugin name (default: the file's base name)"},
			&cli.BoolFlag{Name: "json", Usage: "print each host's verdict as JSON (without --plugins)"},
			&cli.BoolFlag{Name: "host-pulls", Usage: "with an oci:// reference and --executor: each host pulls the module from the registry itself (serve --pull-from), instead of this client sending it"},
		}, append(append(VerdictFlags(), hostconn.TokenFlags()...), registry.RegistryFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit("install needs one module file or oci:// reference: cmdhost plugin install FILE.wasm --executor ID (or --plugins DIR)", base.ExitUsage)
			}
			if c.String("plugins") == "" && !c.IsSet("executor") {
				// Where to install is said, never guessed.
				return cli.Exit("plugin install: --plugins DIR is required, or --executor ID to send the module to running hosts (see cmdhost plugin install --help)", base.ExitUsage)
			}
			if c.Bool("host-pulls") {
				return runHostPulls(c, c.Args().First())
			}
			if dir := c.String("plugins"); dir != "" {
				// Before a pull, which may take a while and ask for credentials.
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					return cli.Exit(fmt.Sprintf("--plugins %s: not a directory", dir), 2)
				}
			}
			src, done, err := registry.PulledFile(c, c.Args().First())
			if err != nil {
				return err
			}
			defer done()
			if c.String("plugins") == "" {
				return runRemoteInstall(c, src)
			}
			return runInstall(c, src)
		},
	}
}

func runInstall(c *cli.Context, src string) error {
	dir := c.String("plugins") // a folder: checked before the module was pulled
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	fmt.Fprintf(c.App.ErrWriter, "validating %s…\n", src)
	folder, closeFolder := FolderManager(e, dir, pluginmgr.Defaults{ExecTimeout: pluginmgr.NoTimeout})
	defer closeFolder()
	in, err := InstallModule(c, e, src, dir, c.String("name"), folder)
	var invalid *InvalidModule
	var clash *ClashModule
	switch {
	case errors.As(err, &invalid):
		return cli.Exit(fmt.Sprintf("not installed: %v", invalid.Err), 1)
	case errors.As(err, &clash):
		return cli.Exit(fmt.Sprintf("not installed: %v", clash), 1)
	case err != nil:
		return err
	}
	fmt.Fprintf(c.App.Writer, "installed %s as %s\n", src, in.Dst)
	line, err := HostVerdict(c.Context, c, in.Name, in.Digest, dir)
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

// InvalidModule is installModule's error for a module the host would not
// load.
type InvalidModule struct{ Err error }

func (e *InvalidModule) Error() string { return e.Err.Error() }

// Installed is a module installModule put into a plugins folder.
type Installed struct {
	Name     string   // the plugin's name
	Dst      string   // its path in the folder
	Digest   string   // hex sha256 of its content, as the host's status shows it
	Commands []string // the commands it declares
}

// InstallModule loads the module file src as the host would, checks it
// against the plugins of the folder dir (folder, a folderManager of dir,
// loads them offline: a command or topic another plugin serves there
// refuses it, a *clashModule) and, when all is well, copies it into dir as
// NAME.wasm (name, or the file's base name): written to a temporary file
// in dir and renamed into place, so that a running host never sees half a
// file.
func InstallModule(c *cli.Context, e *wasm.Engine, src, dir, name string, folder *pluginmgr.Manager) (Installed, error) {
	if name == "" {
		name = base.PluginName(src)
	}
	// The host's own rule: a name it would skip (a dotfile) or a path
	// is refused here rather than installed and never served.
	if err := pluginmgr.CheckName(name); err != nil {
		return Installed{}, &InvalidModule{fmt.Errorf("%w (choose it with --name)", err)}
	}
	mode, err := installMode(dir)
	if err != nil {
		return Installed{}, err
	}
	p, bin, err := base.LoadFile(c, e, src, wasm.PluginConfig{PoolSize: 1})
	if err != nil {
		return Installed{}, &InvalidModule{err}
	}
	in := Installed{Name: name, Dst: filepath.Join(dir, name+".wasm")}
	for _, cmd := range p.Description().Commands {
		in.Commands = append(in.Commands, cmd.Name)
	}
	_ = p.Close(context.Background())
	sum := sha256.Sum256(bin)
	in.Digest = hex.EncodeToString(sum[:])
	folder.LoadAll(c.Context) // only what changed since the last time (dev)
	if err := checkFolder(c, folder, dir, name, bin); err != nil {
		return Installed{}, err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return Installed{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(bin); err != nil {
		tmp.Close()
		return Installed{}, err
	}
	if err := tmp.Chmod(mode); err != nil { // CreateTemp made it 0600
		tmp.Close()
		return Installed{}, err
	}
	if err := tmp.Close(); err != nil {
		return Installed{}, err
	}
	// The signature beside the module goes with it, first: a host that
	// checks signatures reads it when it sees the module.
	sig, err := moduleSignature(src)
	if err != nil {
		return Installed{}, err
	}
	sigDst := filepath.Join(dir, signatureName(name))
	if sig != nil {
		err = os.WriteFile(sigDst, sig, mode)
	} else if err = os.Remove(sigDst); errors.Is(err, os.ErrNotExist) {
		err = nil // the old module's signature would not be this one's
	}
	if err != nil {
		return Installed{}, err
	}
	if err := os.Rename(tmp.Name(), in.Dst); err != nil {
		return Installed{}, err
	}
	return in, nil
}
