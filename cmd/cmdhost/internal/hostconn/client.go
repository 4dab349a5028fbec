package hostconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// connectWait bounds how long a client subcommand waits to connect to a
// broker that does not refuse the connection (one that drops packets).
const connectWait = 5 * time.Second

// hostClient is a connection to the broker for calls to one host's
// commands (invoke); adminHost one for its admin ops (host/admin's
// client). Every client subcommand uses one of them, so that they give up
// by one rule: a refused connection at once, and no ack within the
// invoker's ack window (1.5 s) whatever --timeout says.
type hostClient struct {
	Broker   *url.URL   // the first --broker
	failover []*url.URL // the other --broker values, tried in turn
	auth     admin.BrokerAuth
	Executor string // --executor, or the host name
	Inv      *rpc.Invoker
}

// hostTarget reads the --broker, the auth flags and --executor of c: the
// brokers to connect to (the first, then the others in turn), how to log
// in there, and the executor id of the host to call there.
func hostTarget(c *cli.Context) ([]*url.URL, admin.BrokerAuth, string, error) {
	us, err := BrokerURLs(c)
	if err != nil {
		return nil, admin.BrokerAuth{}, "", cli.Exit(err, base.ExitUsage)
	}
	auth, err := BrokersAuth(c, us)
	if err != nil {
		return nil, auth, "", err
	}
	executor := c.String("executor")
	if executor == "" {
		executor = Hostname()
	} else if err := topic.CheckLevel(executor); err != nil {
		// It is a level of every topic the host serves: a wildcard in it
		// would make a topic no request can be published to.
		return nil, auth, "", cli.Exit(fmt.Sprintf("--executor %q: not an executor id: %v", executor, err), base.ExitUsage)
	}
	return us, auth, executor, nil
}

// DialHost connects to the --broker of c for calls to the host --executor
// names. Close it.
func DialHost(c *cli.Context) (*hostClient, error) {
	us, auth, executor, err := hostTarget(c)
	if err != nil {
		return nil, err
	}
	h := &hostClient{Broker: us[0], failover: us[1:], auth: auth, Executor: executor}
	ctx, cancel := context.WithTimeout(c.Context, connectWait)
	defer cancel()
	if h.Inv, err = rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: h.Broker, Failover: h.failover, Auth: auth}, RefusedIsFinal: true}); err != nil {
		return nil, ConnectError(err)
	}
	return h, nil
}

func (h *hostClient) Close() { _ = h.Inv.Close() }

// NoExecutor is the hint of a call that no executor acknowledged: no host
// with that id on that broker, or (for a call to rpc/ID/COMMAND) a host
// that serves no such command, told apart by asking the host's admin list.
func (h *hostClient) NoExecutor(ctx context.Context, err error, command string) error {
	hint := fmt.Sprintf("is `cmdhost serve` running with --id %s on %s? (a host still loading its plugins answers once it logs msg=serving)", h.Executor, redact.URL(h.Broker))
	if command == "" {
		return cli.Exit(fmt.Sprintf("%v\nis an executor serving that topic on %s? (an executor without cmdhost's ack extension needs --no-ack)", err, redact.URL(h.Broker)), base.ExitNoExecutor)
	}
	views, lerr := hostPlugins(ctx, append([]*url.URL{h.Broker}, h.failover...), h.auth, h.Executor)
	served := commandsOf(views)
	switch {
	case lerr == nil && !slices.Contains(served, command):
		return cli.Exit(fmt.Sprintf("host %s serves no command %q%s; it serves: %s (cmdhost plugin list)",
			h.Executor, command, whyNotServed(views, command), strings.Join(served, ", ")), base.ExitNoCommand)
	case lerr == nil: // served, and yet not acked: the host is overloaded or lost the sends
		hint = fmt.Sprintf("host %s serves %s but did not acknowledge the request in time: try again", h.Executor, command)
	}
	return cli.Exit(err.Error()+"\n"+hint, base.ExitNoExecutor)
}

// whyNotServed says why a plugin named like the command serves nothing,
// when the host has one that does not serve: disabled by its operator
// file, failed to load (with the error), removed, still loading. A plugin
// whose name is its command's is the common case (the test plugins, the
// projects cmdhost new makes).
func whyNotServed(views []admin.PluginView, command string) string {
	for _, v := range views {
		if v.Name != command || v.State == pluginmgr.StateServing {
			continue
		}
		switch v.State {
		case pluginmgr.StateDisabled:
			return fmt.Sprintf(": plugin %s is disabled by its operator file %s (\"enabled\": false)", base.Shown(v.Name), base.Shown(v.Operator))
		case pluginmgr.StateFailed:
			return fmt.Sprintf(": plugin %s did not load: %s", base.Shown(v.Name), base.Shown(firstLine(v.LastError)))
		default:
			return fmt.Sprintf(": plugin %s is %s", base.Shown(v.Name), base.Shown(string(v.State)))
		}
	}
	return ""
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// commandsOf returns the sorted names of the commands the plugins serve.
func commandsOf(views []admin.PluginView) []string {
	var names []string
	for _, v := range views {
		names = append(names, v.Commands...)
	}
	slices.Sort(names)
	return names
}

// hostPlugins returns the admin list of the host executor on brokers
// (the first, then the others in turn), asked over a connection of its
// own.
func hostPlugins(ctx context.Context, brokers []*url.URL, auth admin.BrokerAuth, executor string) ([]admin.PluginView, error) {
	dctx, cancel := context.WithTimeout(ctx, connectWait)
	a, err := admin.Dial(dctx, admin.ClientConfig{Broker: brokers[0], Failover: brokers[1:], Auth: auth, ExecutorID: executor, Timeout: 5 * time.Second})
	cancel()
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.List(ctx)
}

// TimedOut is the exit of a call with no reply before its --timeout.
func TimedOut(err error, call rpc.Call) error {
	if errors.Is(err, rpc.ErrAcked) {
		return cli.Exit(fmt.Sprintf("no reply within --timeout %v: the executor acknowledged the request, so the command runs longer than that; "+
			"it was told to cancel the call (raise --timeout to wait longer)", call.Timeout), base.ExitTimeout)
	}
	msg := fmt.Sprintf("no reply within --timeout %v on %s", call.Timeout, call.Topic)
	if !call.Ack {
		msg += ": is an executor serving it? (with --no-ack a missing executor and a slow command look alike)"
	}
	return cli.Exit(msg, base.ExitTimeout)
}
