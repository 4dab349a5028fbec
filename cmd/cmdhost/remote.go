package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// maxSentModule bounds the module file install reads to send: a host
// takes at most its --max-module-size, which it says in its stats.
const maxSentModule = 256 << 20

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
	return onHosts(c, token, func(ctx context.Context, h *adminHost, t target) (string, any, error) {
		v, err := t.client.WithTimeout(hostTimeout(c)).Install(ctx, name, bin, sig)
		if err != nil {
			return "", nil, h.explain(t.client, admin.OpInstall, hostTimeout(c), err)
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
		name = pluginName(src)
	}
	if err := pluginmgr.CheckName(name); err != nil {
		return "", nil, nil, "", cli.Exit(fmt.Sprintf("%v (choose it with --name)", err), exitUsage)
	}
	if bin, err = wasm.ReadModule(src, maxSentModule); err != nil {
		return "", nil, nil, "", cli.Exit(err, exitUsage)
	}
	if sig, err = moduleSignature(src); err != nil {
		return "", nil, nil, "", err
	}
	if token, err = adminToken(c); err != nil {
		return "", nil, nil, "", err
	}
	return name, bin, sig, token, nil
}

// verdictLine is the outcome line of a host's verdict: served, or refused
// (an error, exit 1) with the host's reason.
func verdictLine(v admin.Verdict) (string, any, error) {
	if !v.Served {
		return "", v, cli.Exit(fmt.Sprintf("refused %s (sha256 %s): %s; the version serving before goes on", shown(v.Name), short(v.Digest), shown(v.Reason)), exitFailed)
	}
	line := fmt.Sprintf("served %s (sha256 %s), commands %s", shown(v.Name), short(v.Digest), shown(strings.Join(v.Commands, ", ")))
	if v.Previous != "" {
		line += fmt.Sprintf("; previous version %s kept for a rollback", short(v.Previous))
	}
	return line, v, nil
}

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name: "rollback", Usage: "serve again the version of a plugin its last install replaced, on running hosts (needs --token-file)",
		ArgsUsage: "NAME",
		Description: "Each host keeps the version an install (cmdhost plugin install --executor)\n" +
			"replaced: rollback serves it again and keeps the one it replaces in turn (a\n" +
			"second rollback undoes the first). --executor names the hosts: an id, or ids\n" +
			"and glob patterns separated by commas. Exit status 1 when any host refused.",
		Flags: append(hostFlags(), tokenFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit("rollback needs one plugin name: cmdhost plugin rollback NAME --executor ID", exitUsage)
			}
			token, err := adminToken(c)
			if err != nil {
				return err
			}
			name := c.Args().First()
			return onHosts(c, token, func(ctx context.Context, h *adminHost, t target) (string, any, error) {
				v, err := t.client.WithTimeout(hostTimeout(c)).Rollback(ctx, name)
				if err != nil {
					return "", nil, h.explain(t.client, admin.OpRollback, hostTimeout(c), err)
				}
				return verdictLine(v)
			})
		},
	}
}

// namedOpOnHosts runs reload or remove of the plugin named on each host
// --executor names.
func namedOpOnHosts(c *cli.Context, op string) error {
	token, err := adminToken(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	return onHosts(c, token, func(ctx context.Context, h *adminHost, t target) (string, any, error) {
		out, err := h.callOn(ctx, t.client, op, admin.Request{Name: name}, hostTimeout(c))
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
		return cli.Exit("--host-pulls takes an oci:// reference and hosts (--executor), not a file or --plugins", exitUsage)
	}
	name := c.String("name")
	if name == "" {
		name = repositoryName(ref)
	}
	if err := pluginmgr.CheckName(name); err != nil {
		return cli.Exit(fmt.Sprintf("%v (choose it with --name)", err), exitUsage)
	}
	token, err := adminToken(c)
	if err != nil {
		return err
	}
	return onHosts(c, token, func(ctx context.Context, h *adminHost, t target) (string, any, error) {
		v, err := t.client.WithTimeout(hostTimeout(c)).InstallFrom(ctx, name, ref)
		if err != nil {
			return "", nil, h.explain(t.client, admin.OpInstall, hostTimeout(c), err)
		}
		return verdictLine(v)
	})
}

// repositoryName is the last path element of an OCI reference's
// repository: oci://r:5000/plugins/greet:1.0 → greet.
func repositoryName(ref string) string {
	ref = strings.TrimPrefix(ref, oci.Scheme)
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.Index(last, ":"); i >= 0 {
		last = last[:i]
	}
	return last
}
