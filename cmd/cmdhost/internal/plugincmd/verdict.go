package plugincmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// plugin install and dev report the host's verdict on what they install
// rather than promise it: before copying, the module is checked against
// the plugins folder loaded offline (the host's clash rule, plugins.
// Manager.Check); after copying, a running host is asked, through its
// admin list, until it serves the new digest or refuses it.

// VerdictFlags are install's and dev's flags for the host asked: the
// broker and executor flags of the other plugin subcommands, and --wait.
func VerdictFlags() []cli.Flag {
	return append(hostconn.TargetFlags("MQTT broker `URL` of the host asked for its verdict", "executor id of the host asked (default: the host name)"),
		&cli.DurationFlag{Name: "wait", Value: 10 * time.Second, Usage: "how long to wait for the host to serve the module or refuse it (0: do not ask a host)"})
}

// verdictPoll is how often the host's admin list is asked while waiting:
// the host publishes no event for a load, and a load from the compilation
// cache takes tens of milliseconds.
const verdictPoll = 200 * time.Millisecond

// ClashModule is installModule's error for a module that a host serving
// the folder would refuse: another plugin serves one of its commands or
// an overlapping topic.
type ClashModule struct {
	clash *pluginmgr.ClashError
	dir   string
}

func (e *ClashModule) Error() string {
	k, other := e.clash, filepath.Join(e.dir, e.clash.Other+".wasm")
	what := fmt.Sprintf("command %s is already served by plugin %s (%s)", k.Command, k.Other, other)
	fix := "rename the command in " + k.Plugin
	if k.Topic != "" {
		what = fmt.Sprintf("command %s's topic %s overlaps command %s's topic %s, served by plugin %s (%s)",
			k.Command, k.Topic, k.OtherCommand, k.OtherTopic, k.Other, other)
		fix = "give " + k.Command + " a topic of its own"
	}
	return fmt.Sprintf("%s: a host serving %s would refuse %s; %s, or take %s out first (cmdhost plugin remove %s, or delete %s)",
		what, e.dir, k.Plugin, fix, k.Other, k.Other, other)
}

// checkFolder checks the module bin, to be installed as plugin name, against
// the plugins folder dir loaded offline: a *clashModule when a host serving
// dir would refuse it for a clash, an *invalidModule for any other reason
// (its operator file is invalid or disables it).
func checkFolder(c *cli.Context, m *pluginmgr.Manager, dir, name string, bin []byte) error {
	err := m.Check(c.Context, name, bin)
	var clash *pluginmgr.ClashError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &clash):
		return &ClashModule{clash: clash, dir: dir}
	case c.Context.Err() != nil:
		return err
	}
	return &InvalidModule{err}
}

// HostVerdict waits, up to --wait (ctx's end stops it), until the host
// named by --broker and --executor serves digest as plugin name or
// refuses it, and returns what it observed: a line to print, or an error
// (exit 1 refused, 3 no broker, 4 no such host, 6 --wait passed). When
// neither --broker nor --executor is given and no host answers at the
// defaults, there is no verdict to wait for: the line says so and the
// error is nil.
func HostVerdict(ctx context.Context, c *cli.Context, name, digest, dir string) (string, error) {
	wait := c.Duration("wait")
	if wait <= 0 {
		return "not checked with a running host (--wait 0)", nil
	}
	named := c.IsSet("executor") || c.IsSet("broker")
	unasked := func(err error) (string, error) {
		var exit cli.ExitCoder
		if !named && errors.As(err, &exit) && (exit.ExitCode() == base.ExitNoBroker || exit.ExitCode() == base.ExitNoExecutor) {
			return fmt.Sprintf("no host answered at %s (--broker and --executor name the one to ask): not checked with a running host; a host serving %s loads it when it sees the file", redact.String(strings.Join(c.StringSlice("broker"), ", ")), dir), nil
		}
		return "", err
	}
	h, err := hostconn.DialAdmin(c, "")
	if err != nil {
		return unasked(err)
	}
	defer h.Close()
	start := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last *admin.PluginView
	for first := true; ; first = false {
		left := time.Until(start.Add(wait))
		if left <= 0 {
			return "", cli.Exit(base.Pending(h.Executor, name, dir, wait, last, digest), base.ExitTimeout)
		}
		out, err := h.Call(waitCtx, admin.OpList, nil, min(left, 5*time.Second))
		switch {
		case err != nil && first && waitCtx.Err() == nil:
			return unasked(err)
		case err != nil && waitCtx.Err() == nil:
			return "", err
		case err == nil:
			var views []admin.PluginView
			if err := json.Unmarshal(out, &views); err != nil {
				return "", fmt.Errorf("host %s's plugin list: %w", h.Executor, err)
			}
			if !named && servesAnother(views, dir) {
				// The host at the defaults is not this folder's host (a
				// `make run` host serving another folder): nothing to ask it.
				return fmt.Sprintf("the host at %s (%s) serves another folder: not checked with a running host; a host serving %s loads it when it sees the file",
					redact.String(strings.Join(c.StringSlice("broker"), ", ")), h.Executor, dir), nil
			}
			last = nil
			for i := range views {
				if views[i].Name == name {
					last = &views[i]
				}
			}
			if elsewhere(last, dir) {
				return "", cli.Exit(fmt.Sprintf("host %s serves plugin %s from another folder, not from %s: install into its folder (--plugins: the folder of its serve --plugins), or name the host that serves %s (--executor)",
					h.Executor, name, dir, dir), base.ExitFailed)
			}
			if line, done, err := judge(h.Executor, last, digest, dir, time.Since(start)); done {
				return line, err
			}
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return "", cli.Exit("interrupted while waiting for the host", base.ExitInterrupted)
			}
			return "", cli.Exit(base.Pending(h.Executor, name, dir, wait, last, digest), base.ExitTimeout)
		case <-time.After(verdictPoll):
		}
	}
}

// elsewhere reports whether the host reads plugin v from a folder other
// than dir (a host serving another folder, whose plugin of that name says
// nothing about the file installed): its view names its folder by
// admin.FolderID, not by its path. false when that cannot be told (a
// host from before FolderID).
func elsewhere(v *admin.PluginView, dir string) bool {
	if v == nil || v.Folder == "" {
		return false
	}
	ours := admin.FolderID(dir)
	return ours != "" && ours != v.Folder
}

// servesAnother reports whether the host whose plugins are views serves
// a folder other than dir: one of them says so (admin.FolderID).
func servesAnother(views []admin.PluginView, dir string) bool {
	for i := range views {
		if elsewhere(&views[i], dir) {
			return true
		}
	}
	return false
}

// judge reads the host's view of the plugin (nil: not listed): whether it
// serves digest, refused it, or has not decided yet (done false).
func judge(executor string, v *admin.PluginView, digest, dir string, after time.Duration) (line string, done bool, err error) {
	switch {
	case v == nil:
		return "", false, nil
	case v.Digest == digest && v.State == pluginmgr.StateServing:
		return fmt.Sprintf("served by host %s (seen %v after the install)", executor, after.Round(10*time.Millisecond)), true, nil
	case v.RefusedDigest == digest:
		return "", true, cli.Exit(fmt.Sprintf("host %s refused it: %s\n%s stays in %s: the host loads it again when it changes, or (refused for a clash) when the other plugin frees the command; fix it, or delete it",
			executor, base.Shown(v.LastError), base.Shown(v.Name)+".wasm", dir), base.ExitFailed)
	case v.State == pluginmgr.StateDisabled:
		return "", true, cli.Exit(fmt.Sprintf("host %s does not serve it: its operator file %s says \"enabled\": false", executor, base.Shown(v.Operator)), base.ExitFailed)
	}
	return "", false, nil
}
