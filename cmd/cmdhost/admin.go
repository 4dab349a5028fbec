package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/secret"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// The plugin subcommands that talk to a running host go through its admin
// ops over MQTT, with the client of package host/admin.

func hostFlags() []cli.Flag {
	return append(targetFlags("MQTT broker `URL`", "executor id of the host (default: the host name)"),
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the host"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"})
}

// targetFlags are the flags that name the host a client talks to, --broker
// and --executor (with their usage texts), and how to log in to the broker.
func targetFlags(brokerUsage, executorUsage string) []cli.Flag {
	return append([]cli.Flag{
		brokersFlag(brokerUsage, "mqtt://"+defaultListen),
		&cli.StringFlag{Name: "executor", Usage: executorUsage, EnvVars: []string{"CMDHOST_EXECUTOR", "CMDHOST_ID"}},
	}, authFlags()...)
}

// allFlag asks every replica of a share group instead of whichever
// answers (plugin list, watch).
func allFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all", Usage: "show every replica of the host's share group (serve --share), each found by its announcements within " + admin.DiscoveryWindow.String()}
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
	us, auth, executor, err := hostTarget(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Context, connectWait)
	defer cancel()
	client, err := admin.Dial(ctx, admin.ClientConfig{Broker: us[0], Failover: us[1:], Auth: auth, ExecutorID: executor, Token: token})
	if err != nil {
		return nil, connectError(err)
	}
	return &adminHost{broker: us[0], executor: executor, client: client}, nil
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
	return h.callOn(ctx, h.client, op, req, timeout)
}

// callOn is call on client: the host's, or one of its replicas'
// (admin.Client.ForReplica).
func (h *adminHost) callOn(ctx context.Context, client *admin.Client, op string, req any, timeout time.Duration) ([]byte, error) {
	out, err := client.WithTimeout(timeout).Call(ctx, op, req)
	if err != nil {
		return nil, h.explain(client, op, timeout, err)
	}
	return out, nil
}

// explain turns the error of op, asked of client with timeout, into the
// CLI's: its message and exit status.
func (h *adminHost) explain(client *admin.Client, op string, timeout time.Duration, err error) error {
	var refused *admin.HostError
	switch {
	case errors.Is(err, admin.ErrNoExecutor) && client.Replica() != "":
		return cli.Exit(fmt.Sprintf("no answer from replica %s of host %q on %s: it announced itself, but may have stopped since",
			shown(client.Replica()), client.ExecutorID(), redact.URL(h.broker)), exitNoExecutor)
	case errors.Is(err, admin.ErrNoExecutor):
		return cli.Exit(fmt.Sprintf("no answer from host %q on %s: is `cmdhost serve` running with --id %s there? (--executor, --broker)", client.ExecutorID(), redact.URL(h.broker), client.ExecutorID()), exitNoExecutor)
	case errors.Is(err, admin.ErrNoResponse):
		return timedOut(err, rpc.Call{Topic: client.Topic(op), Timeout: timeout, Ack: true})
	case errors.As(err, &refused):
		return cli.Exit(refused, exitFailed)
	case errors.As(err, new(*session.PublishRefusedError)):
		// The broker's ACL: this client may not use the admin ops.
		return cli.Exit(err, exitRefused)
	}
	return err
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the plugins of a running host, or of a plugins folder offline",
		ArgsUsage: "[DIR]",
		Description: "Without DIR: asks a running host (--broker, --executor) for its plugins; with\n" +
			"replicas (serve --share), the replica that answers is named, and --all asks each.\n" +
			"With DIR: loads the plugins folder offline as serve would (operator files\n" +
			"NAME.json included) and shows each command's execution timeout with the\n" +
			"setting it comes from and its on_timeout policy; --exec-timeout is serve's.\n" +
			"Exit status 1 when a plugin would not be served.",
		Flags: append(hostFlags(), execTimeoutFlag(), allFlag()),
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
			case 1:
				if c.Bool("all") {
					return cli.Exit("--all asks a running host's replicas: not with a plugins folder", exitUsage)
				}
				return runListDir(c, c.Args().First())
			default:
				return cli.Exit("list takes at most one plugins folder: cmdhost plugin list [DIR]", 2)
			}
			if fleetSyntax(c.String("executor")) {
				return runListFleet(c)
			}
			if c.Bool("all") {
				return runListAll(c)
			}
			if c.Bool("json") {
				out, err := adminCall(c, admin.OpList, nil)
				if err != nil {
					return err
				}
				if string(bytes.TrimSpace(out)) == "null" { // a host from before it said []
					out = []byte("[]")
				}
				_, err = c.App.Writer.Write(append(out, '\n'))
				return err
			}
			// The stats carry the plugins and name the replica even when
			// there is no plugin.
			h, err := dialAdmin(c, "")
			if err != nil {
				return err
			}
			defer h.Close()
			st, err := h.stats(c.Context, c.Duration("timeout"))
			if err != nil {
				return err
			}
			if err := printPluginTable(c.App.Writer, st.Plugins); err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, hostLine(h.executor, st.ReplicaID))
			return err
		},
	}
}

// printPluginTable writes plugin list's table of views.
func printPluginTable(w io.Writer, views []admin.PluginView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// ERRORS counts the calls that failed (trap, timeout, bad
	// reply) and those answered with an error status.
	// FUEL/CALL is the mean work units of its calls (docs/plugins.md, Fuel).
	// KEYS and BYTES are what the plugin's state namespace holds.
	fmt.Fprintln(tw, "NAME\tSTATE\tDIGEST\tCOMMANDS\tINSTANCES\tCALLS\tERRORS\tP50\tP99\tFUEL/CALL\tRELOADS\tKEYS\tBYTES\tLAST ERROR")
	for _, v := range views {
		p50, p99 := "-", "-" // no call of the version serving, no latency
		if v.P99Ms > 0 {
			p50, p99 = fmt.Sprintf("%.2fms", v.P50Ms), fmt.Sprintf("%.2fms", v.P99Ms)
		}
		fuel := "-"
		if v.Fuel.Calls > 0 {
			fuel = units(v.Fuel.PerCall())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", shown(v.Name), shown(string(v.State)), short(v.Digest),
			shown(commandList(v.Commands)), v.Instances, v.Calls, v.Failures+v.ErrorReplies, p50, p99, fuel, v.Reloads, v.StateKeys, v.StateBytes,
			orDash(shown(v.LastError)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printTriggerTable(w, views)
}

// printTriggerTable writes plugin list's table of the plugins' triggers,
// when they have any: each one's topic, whether it is subscribed and why
// not, and what the host did with its messages.
func printTriggerTable(w io.Writer, views []admin.PluginView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := false
	for _, v := range views {
		for _, t := range v.Triggers {
			if !header {
				fmt.Fprintln(tw, "\nTRIGGER\tPLUGIN\tTOPIC\tSTATE\tMESSAGES\tHANDLED\tFAILURES\tDROPPED\tDUPLICATES\tWHY NOT SUBSCRIBED")
				header = true
			}
			why := t.Why
			if t.SubscribeError != "" {
				why = t.SubscribeError
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", shown(t.Name), shown(v.Name), shown(t.Topic), shown(string(t.State)),
				t.Messages, t.Handled, t.Failures, t.Dropped, t.Duplicates, orDash(shown(why)))
		}
	}
	return tw.Flush()
}

// replicaPlugins is one replica's plugins, as plugin list --all --json
// prints them.
type replicaPlugins struct {
	admin.ReplicaID
	Plugins []admin.PluginView `json:"plugins"`
}

// runListAll lists the plugins of every replica of the host's share
// group (a lone host: its own), one table (or one JSON object) each.
func runListAll(c *cli.Context) error {
	h, err := dialAdmin(c, "")
	if err != nil {
		return err
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	set := h.listenReplicas(ctx)
	_, ids, err := h.replicas(ctx, set, c.Duration("timeout"))
	if err != nil {
		return err
	}
	all := []replicaPlugins{}
	for _, id := range ids {
		client, err := h.replicaClient(id)
		if err != nil {
			return err
		}
		out, err := h.callOn(ctx, client, admin.OpStats, nil, c.Duration("timeout"))
		if err != nil && ctx.Err() == nil && len(ids) > 1 {
			// A replica that announced itself may have stopped since (or
			// the announcement was not a replica's): the others are
			// shown, as watch --all does.
			fmt.Fprintf(c.App.ErrWriter, "plugin list: replica %s: %v\n", clip(shown(id), 64), err)
			continue
		}
		if err != nil {
			return err
		}
		var st admin.Stats
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Errorf("the stats of replica %s: %w", shown(id), err)
		}
		all = append(all, replicaPlugins{ReplicaID: st.ReplicaID, Plugins: st.Plugins})
	}
	if c.Bool("json") {
		return writeJSONLine(c.App.Writer, all)
	}
	for i, r := range all {
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		fmt.Fprintln(c.App.Writer, hostLine(h.executor, r.ReplicaID)+":")
		if err := printPluginTable(c.App.Writer, r.Plugins); err != nil {
			return err
		}
	}
	return nil
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
		digest = digest[:12]
	}
	return shown(orDash(digest)) // a host's answer: control characters shown as �
}

func namedOp(name, usage, op string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "NAME",
		Flags: append(hostFlags(), tokenFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit(fmt.Sprintf("%s needs one plugin name: cmdhost plugin %s NAME", name, name), 2)
			}
			if fleetSyntax(c.String("executor")) {
				return namedOpOnHosts(c, op)
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
		}, append(append(verdictFlags(), tokenFlags()...), registryFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit("install needs one module file or oci:// reference: cmdhost plugin install FILE.wasm --executor ID (or --plugins DIR)", exitUsage)
			}
			if c.String("plugins") == "" && !c.IsSet("executor") {
				// Where to install is said, never guessed.
				return cli.Exit("plugin install: --plugins DIR is required, or --executor ID to send the module to running hosts (see cmdhost plugin install --help)", exitUsage)
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
			src, done, err := pulledFile(c, c.Args().First())
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
	// The signature beside the module goes with it, first: a host that
	// checks signatures reads it when it sees the module.
	sig, err := moduleSignature(src)
	if err != nil {
		return installed{}, err
	}
	sigDst := filepath.Join(dir, signatureName(name))
	if sig != nil {
		err = os.WriteFile(sigDst, sig, mode)
	} else if err = os.Remove(sigDst); errors.Is(err, os.ErrNotExist) {
		err = nil // the old module's signature would not be this one's
	}
	if err != nil {
		return installed{}, err
	}
	if err := os.Rename(tmp.Name(), in.dst); err != nil {
		return installed{}, err
	}
	return in, nil
}

// replicaSet is the replicas of a host's share group heard from, with
// when each last announced itself (admin.ReplicasTopic).
type replicaSet struct {
	mu        sync.Mutex
	seen      map[string]heard
	first     chan struct{} // closed at the first announcement: the subscription is live
	firstOnce sync.Once
}

// heard is when a replica last announced itself, and in which group.
type heard struct {
	at    time.Time
	share string
}

// maxReplicas bounds the replicas a --all view keeps: anyone on the
// broker may announce one, and each is asked at every refresh.
const maxReplicas = 64

// listenReplicas receives the announcements of the host's replicas until
// ctx ends.
func (h *adminHost) listenReplicas(ctx context.Context) *replicaSet {
	set := &replicaSet{seen: map[string]heard{}, first: make(chan struct{})}
	go func() {
		_ = h.client.Replicas(ctx, func(id admin.ReplicaID) {
			set.firstOnce.Do(func() { close(set.first) })
			set.mu.Lock()
			defer set.mu.Unlock()
			if _, known := set.seen[id.ClientID]; known || len(set.seen) < maxReplicas {
				set.seen[id.ClientID] = heard{at: time.Now(), share: id.Share}
			}
		})
	}()
	return set
}

// live returns the replicas of share group share heard from in the last
// three announcement intervals before now (the others are forgotten),
// and also, those of also (the replica that answered the shared op),
// sorted.
func (r *replicaSet) live(now time.Time, share string, also ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, h := range r.seen {
		switch {
		case now.Sub(h.at) > 3*admin.AnnounceInterval:
			delete(r.seen, id)
		case h.share == share:
			out = append(out, id)
		}
	}
	for _, id := range also {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// replicas finds the replicas of the host: it asks the host's stats on
// the shared topic (a host that does not answer fails as the other ops
// do) and, when the host that answered is a replica of a share group,
// listens to the group's announcements for admin.DiscoveryWindow from
// the first one set heard (then its subscription is live, however long it
// took; at most timeout is spent waiting for that first one). A lone
// host is its one replica.
func (h *adminHost) replicas(ctx context.Context, set *replicaSet, timeout time.Duration) (admin.ReplicaID, []string, error) {
	st, err := h.stats(ctx, timeout)
	if err != nil {
		return admin.ReplicaID{}, nil, err
	}
	if st.Share == "" {
		return st.ReplicaID, []string{st.ClientID}, nil
	}
	select {
	case <-ctx.Done():
		return st.ReplicaID, nil, ctx.Err()
	case <-set.first:
	case <-time.After(timeout):
	}
	select {
	case <-ctx.Done():
		return st.ReplicaID, nil, ctx.Err()
	case <-time.After(admin.DiscoveryWindow):
	}
	return st.ReplicaID, set.live(time.Now(), st.Share, st.ClientID), nil
}

// replicaClient is the client that asks replica id on its own topics, or
// the host's when id is "" (a host from before replicas named themselves)
// or not a topic level (a lone host's client id may be any MQTT one: it
// serves no topics of its own then).
func (h *adminHost) replicaClient(id string) (*admin.Client, error) {
	if id == "" || topic.CheckLevel(id) != nil {
		return h.client, nil
	}
	return h.client.ForReplica(id)
}

// hostLine names the host and the replica that answered, as plugin list
// shows them: "host H, replica R (share group G)"; a lone host whose
// client id is its executor id is only "host H".
func hostLine(executor string, id admin.ReplicaID) string {
	if r := replicaLine(executor, id); r != "" {
		return "host " + shown(executor) + ", " + r
	}
	return "host " + shown(executor)
}

// replicaLine is "replica R (share group G)", or "" for a lone host whose
// client id is its executor id (or a host from before replicas were
// named).
func replicaLine(executor string, id admin.ReplicaID) string {
	if id.ClientID == "" || id.Share == "" && id.ClientID == executor {
		return ""
	}
	s := "replica " + shown(id.ClientID)
	if id.Share != "" {
		s += " (share group " + shown(id.Share) + ")"
	}
	return s
}

// units shows a count of fuel units shortly: 950, 12k, 3.4M, 7.1G.
func units(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n < 1_000_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n < 10_000_000_000:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	}
	return fmt.Sprintf("%dG", n/1_000_000_000)
}
