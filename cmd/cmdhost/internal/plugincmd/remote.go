package plugincmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// runRemoteInstall sends the module FILE to each host --executor names
// and prints each host's verdict.
func runRemoteInstall(c *cli.Context, src string) error {
	name, bin, sig, token, err := moduleToSend(c, src)
	if err != nil {
		return err
	}
	if sig != nil {
		fmt.Fprintf(c.App.ErrWriter, "with its signature %s.sig\n", src)
	}
	sum := sha256.Sum256(bin)
	fmt.Fprintf(c.App.ErrWriter, "installing %s as plugin %s (sha256 %s, %d bytes)…\n", src, name, hex.EncodeToString(sum[:]), len(bin))
	return hostconn.OnHosts(c, token, func(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target) (string, any, error) {
		v, err := t.Client.WithTimeout(hostconn.HostTimeout(c)).Install(ctx, name, bin, sig)
		if err != nil {
			return "", nil, h.Explain(t.Client, admin.OpInstall, hostconn.HostTimeout(c), err)
		}
		return verdictLine(v)
	})
}

// moduleToSend reads what an install or a rollout sends to hosts: the
// plugin's name (--name, or the file's), the module FILE, its signature
// FILE.sig when there is one (nil otherwise), and the admin token.
func moduleToSend(c *cli.Context, src string) (name string, bin, sig []byte, token string, err error) {
	name = c.String("name")
	if name == "" {
		name = base.PluginName(src)
	}
	if err := pluginmgr.CheckName(name); err != nil {
		return "", nil, nil, "", cli.Exit(fmt.Sprintf("%v (choose it with --name)", err), base.ExitUsage)
	}
	if bin, err = wasm.ReadModule(src, registry.MaxSentModule); err != nil {
		return "", nil, nil, "", cli.Exit(err, base.ExitUsage)
	}
	if sig, err = moduleSignature(src); err != nil {
		return "", nil, nil, "", err
	}
	if token, err = hostconn.AdminToken(c); err != nil {
		return "", nil, nil, "", err
	}
	return name, bin, sig, token, nil
}

// verdictLine is the outcome line of a host's verdict: served, or refused
// (an error, exit 1) with the host's reason.
func verdictLine(v admin.Verdict) (string, any, error) {
	if !v.Served {
		return "", v, cli.Exit(fmt.Sprintf("refused %s (sha256 %s): %s; the version serving before goes on", base.Shown(v.Name), base.Short(v.Digest), base.Shown(v.Reason)), base.ExitFailed)
	}
	line := fmt.Sprintf("served %s (sha256 %s), commands %s", base.Shown(v.Name), base.Short(v.Digest), base.Shown(strings.Join(v.Commands, ", ")))
	if v.Previous != "" {
		line += fmt.Sprintf("; previous version %s kept for a rollback", base.Short(v.Previous))
	}
	return line, v, nil
}

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name: "rollback", Usage: "serve again the version of a plugin its last install replaced, on running hosts (needs --token-file)",
		ArgsUsage: "NAME",
		Description: "Each host keeps the version an install (cmdhost plugin install --executor)\n" +
			"replaced: rollback serves it again and keeps the one it replaces in turn (a\n" +
			"second rollback undoes the first). A version a rollout rolled back on its own\n" +
			"is not kept: rollback then serves the one from before it, on every host.\n" +
			"--executor names the hosts: an id, or ids and glob patterns separated by\n" +
			"commas. Exit status 1 when any host refused.",
		Flags: append(hostconn.HostFlags(), hostconn.TokenFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit("rollback needs one plugin name: cmdhost plugin rollback NAME --executor ID", base.ExitUsage)
			}
			token, err := hostconn.AdminToken(c)
			if err != nil {
				return err
			}
			name := c.Args().First()
			return hostconn.OnHosts(c, token, func(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target) (string, any, error) {
				v, err := t.Client.WithTimeout(hostconn.HostTimeout(c)).Rollback(ctx, name)
				if err != nil {
					return "", nil, h.Explain(t.Client, admin.OpRollback, hostconn.HostTimeout(c), err)
				}
				return verdictLine(v)
			})
		},
	}
}

// namedOpOnHosts runs reload or remove of the plugin named on each host
// --executor names.
func namedOpOnHosts(c *cli.Context, op string) error {
	token, err := hostconn.AdminToken(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	return hostconn.OnHosts(c, token, func(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target) (string, any, error) {
		out, err := h.CallOn(ctx, t.Client, op, admin.Request{Name: name}, hostconn.HostTimeout(c))
		if err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("%s: %s done", name, op), rawJSON(out), nil
	})
}

// rawJSON is a reply's JSON as it came, for --json.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// runHostPulls has each host --executor names pull the module of the
// oci:// reference ref itself, and prints each host's verdict.
func runHostPulls(c *cli.Context, ref string) error {
	if !strings.HasPrefix(ref, oci.Scheme) || c.String("plugins") != "" {
		return cli.Exit("--host-pulls takes an oci:// reference and hosts (--executor), not a file or --plugins", base.ExitUsage)
	}
	name := c.String("name")
	if name == "" {
		name = registry.RepositoryName(ref)
	}
	if err := pluginmgr.CheckName(name); err != nil {
		return cli.Exit(fmt.Sprintf("%v (choose it with --name)", err), base.ExitUsage)
	}
	token, err := hostconn.AdminToken(c)
	if err != nil {
		return err
	}
	return hostconn.OnHosts(c, token, func(ctx context.Context, h *hostconn.AdminHost, t hostconn.Target) (string, any, error) {
		v, err := t.Client.WithTimeout(hostconn.HostTimeout(c)).InstallFrom(ctx, name, ref)
		if err != nil {
			return "", nil, h.Explain(t.Client, admin.OpInstall, hostconn.HostTimeout(c), err)
		}
		return verdictLine(v)
	})
}
