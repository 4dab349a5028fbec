package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// Exit statuses of the subcommands that call a host over MQTT (invoke,
// watch, plugin list/reload/remove), one per kind of failure so that a script
// can tell them apart (docs/cli.md "Exit status").
const (
	exitFailed      = 1 // an error status from the host, or a failure not named below
	exitNoBroker    = 3 // nothing answers at --broker
	exitNoExecutor  = 4 // no executor answers on the topic: no host with that --executor
	exitNoCommand   = 5 // the host answers but serves no such command
	exitTimeout     = 6 // no reply before --timeout
	exitInterrupted = 130
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
	broker   *url.URL   // the first --broker
	failover []*url.URL // the other --broker values, tried in turn
	auth     admin.BrokerAuth
	executor string // --executor, or the host name
	inv      *rpc.Invoker
}

// hostTarget reads the --broker, the auth flags and --executor of c: the
// brokers to connect to (the first, then the others in turn), how to log
// in there, and the executor id of the host to call there.
func hostTarget(c *cli.Context) ([]*url.URL, admin.BrokerAuth, string, error) {
	us, err := brokerURLs(c)
	if err != nil {
		return nil, admin.BrokerAuth{}, "", cli.Exit(err, exitUsage)
	}
	auth, err := brokersAuth(c, us)
	if err != nil {
		return nil, auth, "", err
	}
	executor := c.String("executor")
	if executor == "" {
		executor = hostname()
	} else if err := topic.CheckLevel(executor); err != nil {
		// It is a level of every topic the host serves: a wildcard in it
		// would make a topic no request can be published to.
		return nil, auth, "", cli.Exit(fmt.Sprintf("--executor %q: not an executor id: %v", executor, err), exitUsage)
	}
	return us, auth, executor, nil
}

// dialHost connects to the --broker of c for calls to the host --executor
// names. Close it.
func dialHost(c *cli.Context) (*hostClient, error) {
	us, auth, executor, err := hostTarget(c)
	if err != nil {
		return nil, err
	}
	h := &hostClient{broker: us[0], failover: us[1:], auth: auth, executor: executor}
	ctx, cancel := context.WithTimeout(c.Context, connectWait)
	defer cancel()
	if h.inv, err = rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: h.broker, Failover: h.failover, Auth: auth}, RefusedIsFinal: true}); err != nil {
		return nil, connectError(err)
	}
	return h, nil
}

func (h *hostClient) Close() { _ = h.inv.Close() }

// noExecutor is the hint of a call that no executor acknowledged: no host
// with that id on that broker, or (for a call to rpc/ID/COMMAND) a host
// that serves no such command, told apart by asking the host's admin list.
func (h *hostClient) noExecutor(ctx context.Context, err error, command string) error {
	hint := fmt.Sprintf("is `cmdhost serve` running with --id %s on %s? (a host still loading its plugins answers once it logs msg=serving)", h.executor, redact.URL(h.broker))
	if command == "" {
		return cli.Exit(fmt.Sprintf("%v\nis an executor serving that topic on %s? (an executor without cmdhost's ack extension needs --no-ack)", err, redact.URL(h.broker)), exitNoExecutor)
	}
	views, lerr := hostPlugins(ctx, append([]*url.URL{h.broker}, h.failover...), h.auth, h.executor)
	served := commandsOf(views)
	switch {
	case lerr == nil && !slices.Contains(served, command):
		return cli.Exit(fmt.Sprintf("host %s serves no command %q%s; it serves: %s (cmdhost plugin list)",
			h.executor, command, whyNotServed(views, command), strings.Join(served, ", ")), exitNoCommand)
	case lerr == nil: // served, and yet not acked: the host is overloaded or lost the sends
		hint = fmt.Sprintf("host %s serves %s but did not acknowledge the request in time: try again", h.executor, command)
	}
	return cli.Exit(err.Error()+"\n"+hint, exitNoExecutor)
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
			return fmt.Sprintf(": plugin %s is disabled by its operator file %s (\"enabled\": false)", shown(v.Name), shown(v.Operator))
		case pluginmgr.StateFailed:
			return fmt.Sprintf(": plugin %s did not load: %s", shown(v.Name), shown(firstLine(v.LastError)))
		default:
			return fmt.Sprintf(": plugin %s is %s", shown(v.Name), shown(string(v.State)))
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

// timedOut is the exit of a call with no reply before its --timeout.
func timedOut(err error, call rpc.Call) error {
	if errors.Is(err, rpc.ErrAcked) {
		return cli.Exit(fmt.Sprintf("no reply within --timeout %v: the executor acknowledged the request, so the command runs longer than that; "+
			"it was told to cancel the call (raise --timeout to wait longer)", call.Timeout), exitTimeout)
	}
	msg := fmt.Sprintf("no reply within --timeout %v on %s", call.Timeout, call.Topic)
	if !call.Ack {
		msg += ": is an executor serving it? (with --no-ack a missing executor and a slow command look alike)"
	}
	return cli.Exit(msg, exitTimeout)
}
