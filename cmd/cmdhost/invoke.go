package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/rpc"
)

func invokeCommand() *cli.Command {
	return &cli.Command{
		Name:      "invoke",
		Usage:     "call a command of a running host over MQTT",
		ArgsUsage: "COMMAND",
		Description: "Publishes a request to rpc/EXECUTOR/COMMAND and prints the reply's payload.\n" +
			"An error status is printed to stderr with exit status 1.\n\n" +
			"The request asks the executor for an ack (202) and is sent again until one comes:\n" +
			"with no ack and no reply within 1.5 s, no executor serves the command and invoke\n" +
			"fails at once rather than at --timeout. Ctrl-C, or the timeout after an ack, tells\n" +
			"the executor to cancel the call. --no-ack sends a plain v1.0 request, for executors\n" +
			"without the extension (the Azure IoT Operations SDKs, cmdhost before it).",
		Flags: append(requestFlags("the request's expiry"),
			&cli.StringFlag{Name: "executor", Usage: "executor id (default: the host name)", EnvVars: []string{"CMDHOST_EXECUTOR", "CMDHOST_ID"}},
			&cli.StringFlag{Name: "topic", Usage: "request topic (default: rpc/EXECUTOR/COMMAND)"},
			&cli.StringFlag{Name: "broker", Value: "mqtt://" + defaultListen, Usage: "MQTT broker `URL`", EnvVars: []string{"CMDHOST_BROKER"}},
			&cli.BoolFlag{Name: "no-ack", Usage: "plain v1.0 request: no ack, no resend, no cancel (for executors without cmdhost's extensions)"},
		),
		Action: runInvoke,
	}
}

func runInvoke(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("invoke needs one command name: cmdhost invoke COMMAND [-d PAYLOAD]", 2)
	}
	u, err := brokerURL(c.String("broker"))
	if err != nil {
		return cli.Exit(err, 2)
	}
	call := rpc.Call{ContentType: c.String("content-type"), Timeout: c.Duration("timeout"), Topic: c.String("topic"), Ack: !c.Bool("no-ack")}
	if call.Payload, err = payload(c); err != nil {
		return cli.Exit(err, 2)
	}
	if call.Metadata, err = keyValues("meta", c.StringSlice("meta")); err != nil {
		return cli.Exit(err, 2)
	}
	if call.Timeout <= 0 {
		return cli.Exit("--timeout must be positive, e.g. --timeout 5s", 2)
	}
	executor := c.String("executor")
	if call.Topic == "" {
		if executor == "" {
			executor = hostname()
		}
		call.Topic = "rpc/" + executor + "/" + c.Args().First()
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	inv, err := rpc.NewInvoker(cctx, rpc.InvokerConfig{Broker: u, RefusedIsFinal: true})
	cancel()
	if err != nil {
		return err
	}
	defer inv.Close()
	res, err := inv.Invoke(ctx, call)
	switch {
	case errors.Is(err, rpc.ErrNoExecutor):
		hint := "is an executor serving " + call.Topic + " on " + u.String() + "?"
		if c.String("topic") == "" {
			hint = "is `cmdhost serve` running with --id " + executor + " on " + u.String() + "?"
		}
		return cli.Exit(err.Error()+"\n"+hint+" (an executor without cmdhost's ack extension needs --no-ack)", 1)
	case errors.Is(err, rpc.ErrNoResponse):
		return cli.Exit(err.Error()+": is a host serving "+call.Topic+"?", 1)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		msg := "interrupted: the call was cancelled"
		if call.Ack {
			msg += " (the executor was told to stop it)"
		}
		return cli.Exit(msg, 130)
	case err != nil:
		return err
	}
	if res.Status == abi.StatusCancelled {
		return cli.Exit("the call was cancelled by the executor: "+res.Err().Error(), 1)
	}
	if err := res.Err(); err != nil {
		return cli.Exit(err, 1)
	}
	_, err = c.App.Writer.Write(res.Payload)
	return err
}
