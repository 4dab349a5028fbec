package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/broker"
	"github.com/cmdhost/cmdhost/host/events"
	"github.com/cmdhost/cmdhost/host/metrics"
	"github.com/cmdhost/cmdhost/host/rpc"
	"github.com/cmdhost/cmdhost/host/wasm"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// defaultListen is the embedded broker's address: not MQTT's 1883, so it
// never collides with a system broker there.
const defaultListen = "127.0.0.1:11883"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the commands of the plugins folder over MQTT",
		Description: "Loads every *.wasm in --plugins and serves its commands. Without --broker it\n" +
			"starts an embedded MQTT broker on --listen. Stops gracefully on SIGINT/SIGTERM.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plugins", Usage: "plugins `DIR`", Required: true, EnvVars: []string{"CMDHOST_PLUGINS"}},
			&cli.StringFlag{Name: "broker", Usage: "MQTT broker `URL` (mqtt://host:port); none: start the embedded broker", EnvVars: []string{"CMDHOST_BROKER"}},
			&cli.StringFlag{Name: "listen", Value: defaultListen, Usage: "embedded broker `ADDR`", EnvVars: []string{"CMDHOST_LISTEN"}},
			&cli.StringFlag{Name: "id", Usage: "executor id (default: the host name)", EnvVars: []string{"CMDHOST_ID"}},
			&cli.StringFlag{Name: "client-id", Usage: "MQTT client id (default: the executor id)", EnvVars: []string{"CMDHOST_CLIENT_ID"}},
			&cli.StringFlag{Name: "share", Usage: "shared subscription `GROUP`: replicas split requests", EnvVars: []string{"CMDHOST_SHARE"}},
			&cli.DurationFlag{Name: "exec-timeout", Value: 10 * time.Second, Usage: "execution timeout of commands that declare none", EnvVars: []string{"CMDHOST_EXEC_TIMEOUT"}},
			&cli.DurationFlag{Name: "drain", Value: 10 * time.Second, Usage: "how long a stop waits for requests in flight", EnvVars: []string{"CMDHOST_DRAIN"}},
			&cli.IntFlag{Name: "pool", Value: 4, Usage: "instances per plugin (its concurrent calls)", EnvVars: []string{"CMDHOST_POOL"}},
			&cli.IntFlag{Name: "max-module-size", Value: wasm.DefaultMaxModuleBytes, Usage: "largest plugin module in bytes: a larger file is refused", EnvVars: []string{"CMDHOST_MAX_MODULE_SIZE"}},
			&cli.DurationFlag{Name: "idle-timeout", Value: 5 * time.Minute, Usage: "release a plugin's instances after this long without calls (0: never)", EnvVars: []string{"CMDHOST_IDLE_TIMEOUT"}},
			&cli.Int64Flag{Name: "reuse-max-bytes", Value: 64 << 20, Usage: "bound of the reuse cache of idempotent replies; 0 turns reuse off", EnvVars: []string{"CMDHOST_REUSE_MAX_BYTES"}},
			&cli.StringFlag{Name: "admin-token", Usage: "token that allows the admin ops that change state (reload, remove); none: refused", EnvVars: []string{"CMDHOST_ADMIN_TOKEN"}},
			&cli.DurationFlag{Name: "max-expiry", Value: rpc.DefaultMaxExpiry, Usage: "longest message expiry honoured (at least 1s): a request asking for more gets 400, as its dedup entry would be kept that long", EnvVars: []string{"CMDHOST_MAX_EXPIRY"}},
			&cli.IntFlag{Name: "max-depth", Value: host.DefaultMaxDepth, Usage: "longest chain of nested calls (A calls B calls C...), the first caller included", EnvVars: []string{"CMDHOST_MAX_DEPTH"}},
			&cli.StringFlag{Name: "metrics", Usage: "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9464); none: off", EnvVars: []string{"CMDHOST_METRICS"}},
			&cli.BoolFlag{Name: "nested-no-ack", Usage: "nested calls to other executors as plain v1.0 requests (no ack, no cancel), for executors without the ask extension", EnvVars: []string{"CMDHOST_NESTED_NO_ACK"}},
			&cli.BoolFlag{Name: "events", Usage: "publish timeout events as JSON telemetry on cmdhost/{id}/events", EnvVars: []string{"CMDHOST_EVENTS"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"CMDHOST_LOG_LEVEL"}},
		},
		Action: runServe,
	}
}

func runServe(c *cli.Context) error {
	cfg, err := serveConfig(c)
	if err != nil {
		return cli.Exit(err, 2)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, c, cfg)
}

// serveSettings are serve's flags, checked.
type serveSettings struct {
	plugins, listen, id, clientID, share string
	adminToken, metrics                  string
	events, nestedNoAck                  bool
	broker                               *url.URL
	execTimeout, drain, idleTimeout      time.Duration
	maxExpiry                            time.Duration
	pool, maxDepth                       int
	maxModuleSize                        int
	reuseMaxBytes                        int64
	logLevel                             slog.Level
}

func serveConfig(c *cli.Context) (serveSettings, error) {
	s := serveSettings{
		plugins: c.String("plugins"), listen: c.String("listen"), id: c.String("id"),
		clientID: c.String("client-id"), share: c.String("share"), adminToken: c.String("admin-token"),
		execTimeout: c.Duration("exec-timeout"), drain: c.Duration("drain"), pool: c.Int("pool"),
		reuseMaxBytes: c.Int64("reuse-max-bytes"), idleTimeout: c.Duration("idle-timeout"),
		metrics: c.String("metrics"), maxDepth: c.Int("max-depth"), maxExpiry: c.Duration("max-expiry"),
		events: c.Bool("events"), nestedNoAck: c.Bool("nested-no-ack"),
		maxModuleSize: c.Int("max-module-size"),
	}
	if st, err := os.Stat(s.plugins); err != nil || !st.IsDir() {
		return s, fmt.Errorf("--plugins %s: not a directory", s.plugins)
	}
	if s.id == "" {
		s.id = hostname()
	}
	if raw := c.String("broker"); raw != "" {
		u, err := brokerURL(raw)
		if err != nil {
			return s, err
		}
		s.broker = u
	}
	if s.execTimeout < 0 || s.drain < 0 || s.idleTimeout < 0 || s.pool <= 0 || s.reuseMaxBytes < 0 {
		return s, errors.New("--exec-timeout, --drain, --idle-timeout and --reuse-max-bytes must not be negative, --pool must be positive")
	}
	if s.maxDepth <= 0 {
		return s, errors.New("--max-depth must be positive")
	}
	if s.maxExpiry < time.Second {
		return s, errors.New("--max-expiry must be at least 1s (message expiry counts whole seconds)")
	}
	if s.maxModuleSize <= 0 {
		return s, errors.New("--max-module-size must be positive")
	}
	if s.reuseMaxBytes == 0 {
		s.reuseMaxBytes = -1 // off, in the executor's terms
	}
	if err := s.logLevel.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return s, fmt.Errorf("--log-level: want debug, info, warn or error")
	}
	return s, nil
}

func serve(ctx context.Context, c *cli.Context, s serveSettings) error {
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: s.logLevel}))
	if s.broker == nil {
		b, err := broker.Start(broker.Config{Addr: s.listen, Logger: log})
		if err != nil {
			return err
		}
		defer b.Close()
		s.broker = b.URL()
		log.Info("embedded broker listening", "url", s.broker.String())
	}
	engine, err := newEngineLogged(c, log)
	if err != nil {
		return err
	}
	defer engine.Close(context.Background())

	mgr := pluginmgr.NewManager(pluginmgr.Config{Dir: s.plugins, Engine: engine, Logger: log,
		Plugin: wasm.PluginConfig{PoolSize: s.pool, IdleTimeout: s.idleTimeout, MaxModuleBytes: s.maxModuleSize}})
	for _, p := range mgr.LoadAll(ctx) {
		log.Error("plugin not loaded", "err", p)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), s.drain)
		defer cancel()
		_ = mgr.Close(cctx)
	}()
	admin := &host.Admin{Manager: mgr, Token: s.adminToken, HostTimeout: s.execTimeout}
	var timeouts host.CommandTimeouts // the served commands' timeouts, for nested calls
	// The host's own commands come first: should a plugin's command ever
	// have the same topic filter, the executor keeps the first one.
	served := func() []rpc.Command {
		cmds := host.Served(mgr, s.execTimeout, s.pool)
		timeouts.Set(cmds)
		return append(admin.Commands(), cmds...)
	}
	cmds := served()
	met := metrics.New(metrics.Sources{Plugins: mgr.Status}) // --metrics
	if s.metrics != "" {
		ms, err := met.Listen(s.metrics)
		if err != nil {
			return fmt.Errorf("--metrics %s: %w", s.metrics, err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = ms.Close(ctx)
			cancel()
		}()
		log.Info("metrics listening", "url", ms.URL())
	}
	// The one place the events sink is built: timeout events go to the
	// log, the metrics and, with --events, to MQTT telemetry over the
	// executor's connection.
	var exec *rpc.Executor
	sinks := []events.Sink{events.Log(log), met}
	if s.events {
		pub := events.NewPublisher(func(ctx context.Context, payload []byte) error {
			return exec.PublishTelemetry(ctx, host.EventsTopic(s.id), payload, "application/json")
		})
		defer func() { // after the executor stopped (deferred later, run earlier)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = pub.Close(ctx)
			cancel()
		}()
		sinks = append(sinks, pub)
		log.Info("publishing timeout events", "topic", host.EventsTopic(s.id))
	}
	sink := host.EventsWithPlugins(mgr.Origin, events.Multi(sinks...))
	exec, err = rpc.NewExecutor(rpc.Config{
		ExecutorID: s.id, ClientID: s.clientID, Broker: s.broker, ShareGroup: s.share, Logger: log,
		ReuseMaxBytes: s.reuseMaxBytes, Observer: met, Events: sink, MaxExpiry: s.maxExpiry,
	}, nil)
	if err != nil {
		return err
	}
	// SetCommands, unlike NewExecutor, serves the rest when it cannot
	// serve a command: one bad command never keeps the host from starting.
	if err := exec.SetCommands(ctx, cmds); err != nil {
		log.Error("commands not served", "err", err)
	}
	met.Attach(exec)
	admin.Reuse = exec.ReuseStats
	stopNested, err := startNested(ctx, s, engine, mgr, &timeouts, sink, log)
	if err != nil {
		return err
	}
	defer stopNested()
	startCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = exec.Start(startCtx)
	cancel()
	if err != nil {
		_ = exec.Stop(context.Background())
		return err
	}
	log.Info("serving", "executor", s.id, "commands", len(cmds), "topics", exec.Filters())

	// Hot reload: the manager watches the folder; every change of the
	// served commands re-syncs the executor. Changes coalesce: a burst of
	// them is one re-sync with the latest set.
	changed := make(chan struct{}, 1)
	mgr.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				if err := exec.SetCommands(ctx, served()); err != nil {
					log.Error("updating the served commands", "err", err)
				} else {
					log.Info("serving", "commands", len(exec.Filters()), "topics", exec.Filters())
				}
			}
		}
	}()
	go func() {
		if err := mgr.Watch(ctx); err != nil && ctx.Err() == nil {
			log.Error("watching the plugins folder stopped", "dir", s.plugins, "err", err)
		}
	}()
	<-ctx.Done()
	log.Info("stopping: finishing requests in flight", "drain", s.drain)
	dctx, cancel := context.WithTimeout(context.Background(), s.drain)
	defer cancel()
	if s.share != "" {
		// A replica leaving its group hands its share of new requests to
		// the others at once, instead of letting them wait in its session.
		if err := exec.Unsubscribe(dctx); err != nil {
			log.Warn("unsubscribe", "err", err)
		}
	}
	if err := exec.Stop(dctx); err != nil {
		log.Warn("stop", "err", err)
	}
	log.Info("stopped")
	return nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "cmdhost"
	}
	return h
}

// brokerURL parses a --broker value.
func brokerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "mqtt" && u.Scheme != "tcp" && u.Scheme != "tls" && u.Scheme != "mqtts" && u.Scheme != "ssl") {
		return nil, fmt.Errorf("--broker %q: want a URL such as mqtt://127.0.0.1:1883", raw)
	}
	return u, nil
}
