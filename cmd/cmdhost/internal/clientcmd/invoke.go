package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
)

func InvokeCommand() *cli.Command {
	return &cli.Command{
		Name:      "invoke",
		Usage:     "call a command of a running host over MQTT",
		ArgsUsage: "COMMAND | --topic T",
		Description: "Publishes a request to rpc/EXECUTOR/COMMAND and prints the reply's payload.\n" +
			"An error status is printed to stderr with exit status 1. Exit statuses: 0 a\n" +
			"success status; 1 an error status; 2 a bad command line; 3 no broker at --broker;\n" +
			"4 no executor answered; 5 the host serves no such command; 6 no reply before\n" +
			"--timeout; 7 the broker refused the credentials, or a TLS certificate was\n" +
			"refused; 130 interrupted.\n\n" +
			"The request asks the executor for an ack (202) and is sent again until one comes:\n" +
			"with no ack and no reply within 1.5 s, no executor serves the command and invoke\n" +
			"fails at once rather than at --timeout. Ctrl-C, or the timeout after an ack, tells\n" +
			"the executor to cancel the call. --no-ack sends a plain v1.0 request, for executors\n" +
			"without the extension (the Azure IoT Operations SDKs, cmdhost before it).",
		Flags: append(append(requestFlags("the request's expiry (longer than a host's default --exec-timeout, so that its 408 comes first)", defaultInvokeTimeout),
			&cli.StringFlag{Name: "executor", Usage: "executor id (default: the host name)", EnvVars: []string{"CMDHOST_EXECUTOR", "CMDHOST_ID"}},
			&cli.StringFlag{Name: "topic", Usage: "request topic (default: rpc/EXECUTOR/COMMAND)"},
			hostconn.BrokersFlag("MQTT broker `URL`", "mqtt://"+hostconn.DefaultListen),
			&cli.BoolFlag{Name: "no-ack", Usage: "plain v1.0 request: no ack, no resend, no cancel (for executors without cmdhost's extensions)"},
			&cli.BoolFlag{Name: "json", Usage: "print the reply as one JSON object: status, properties, payload (text, or base64), duration"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print the request, the ack and the reply's status, properties and timing on stderr"},
		), hostconn.AuthFlags()...),
		Action: runInvoke,
	}
}

func runInvoke(c *cli.Context) error {
	command := c.Args().First()
	switch {
	case c.NArg() > 1:
		return cli.Exit(fmt.Sprintf("invoke takes one command name, got %d arguments: cmdhost invoke COMMAND [-d PAYLOAD] (quote a payload with spaces)", c.NArg()), base.ExitUsage)
	case c.NArg() == 0 && !c.IsSet("topic"):
		return cli.Exit("invoke needs a command name: cmdhost invoke COMMAND [-d PAYLOAD] (or --topic T)", base.ExitUsage)
	case c.NArg() == 1 && c.IsSet("topic"):
		return cli.Exit("give a command name or --topic, not both: --topic is the whole request topic", base.ExitUsage)
	}
	call := rpc.Call{ContentType: c.String("content-type"), Timeout: c.Duration("timeout"), Topic: c.String("topic"), Ack: !c.Bool("no-ack")}
	var err error
	if call.Payload, err = payload(c); err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	if call.Metadata, err = keyValues("meta", c.StringSlice("meta")); err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	if call.Timeout <= 0 {
		return cli.Exit("--timeout must be positive, e.g. --timeout 5s", base.ExitUsage)
	}
	if call.Topic != "" && !topic.ValidName(call.Topic) {
		return cli.Exit(fmt.Sprintf("--topic %q: not a topic name: no wildcards (+, #), no empty level, no leading or trailing '/'", call.Topic), base.ExitUsage)
	}
	h, err := hostconn.DialHost(c)
	if err != nil {
		return err
	}
	defer h.Close()
	if call.Topic == "" {
		call.Topic = "rpc/" + h.Executor + "/" + command
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	verbose := c.Bool("verbose")
	if verbose {
		fmt.Fprintf(c.App.ErrWriter, "→ %s: %d bytes, %s, expiry %v, broker %s\n", call.Topic, len(call.Payload), base.OrDash(call.ContentType), call.Timeout, redact.URL(h.Broker))
	}
	start := time.Now()
	res, err := h.Inv.Invoke(ctx, call)
	took := time.Since(start)
	switch {
	case errors.Is(err, rpc.ErrNoExecutor),
		// A timeout inside the ack window with no ack: just as unanswered.
		errors.Is(err, rpc.ErrNoResponse) && call.Ack && !errors.Is(err, rpc.ErrAcked):
		return h.NoExecutor(c.Context, err, command)
	case errors.Is(err, rpc.ErrExecutorGone):
		return cli.Exit(fmt.Sprintf("%v\n(the host's log says what became of it; with a shared --store, a host that serves the command again answers a re-sent request from the store)", err), base.ExitNoExecutor)
	case errors.Is(err, rpc.ErrNoResponse):
		return hostconn.TimedOut(err, call)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		msg := "interrupted: the call was cancelled"
		if call.Ack {
			msg += " (the executor was told to stop it)"
		}
		return cli.Exit(msg, base.ExitInterrupted)
	case errors.As(err, new(*session.PublishRefusedError)):
		// The broker's ACL: the caller may not publish there.
		return cli.Exit(err, hostconn.ExitRefused)
	case err != nil:
		return err
	}
	if verbose {
		printReplyInfo(c.App.ErrWriter, res, took)
	}
	if c.Bool("json") {
		if err := base.WriteJSONLine(c.App.Writer, replyView(call.Topic, res, took)); err != nil {
			return err
		}
	} else if err := res.Err(); err == nil {
		if err := base.WritePayload(c.App.Writer, res.Payload); err != nil {
			return err
		}
	}
	switch {
	case res.Status == abi.StatusCancelled:
		return cli.Exit("the call was cancelled by the executor: "+res.Err().Error(), base.ExitFailed)
	case res.Err() != nil:
		return cli.Exit(res.Err(), base.ExitFailed)
	}
	return nil
}
