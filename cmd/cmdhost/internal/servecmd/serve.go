package servecmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/jwt"
	"github.com/cmdhost/cmdhost/internal/otlp"
	"github.com/cmdhost/cmdhost/internal/passwd"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// defaultReplicaSessionExpiry is serve's session expiry with --share. A
// replica killed without a goodbye keeps receiving its share of new
// requests in its session until that expires, and they wait there: 5 s
// bounds that (measured: 5 s of a third of the traffic held, where 2 min
// held 1,563 of 6,000 requests for 2 min), while a replica that reconnects
// within it (a network blip) keeps what was queued for it. A lone host
// keeps session.DefaultExpiry: its requests have nowhere else to go
// while it restarts.
const defaultReplicaSessionExpiry = 5 * time.Second

func ServeCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the commands of the plugins folder over MQTT",
		Description: "Loads every *.wasm in --plugins and serves its commands. Without --broker it\n" +
			"starts an embedded MQTT broker on --listen. Stops gracefully on SIGINT/SIGTERM.\n" +
			"A SIZE is bytes or a number and a unit (4MiB, 64KiB, 2GB); a DURATION has its unit\n" +
			"(500ms, 10s, 2m). Each flag may be set in --config's file or in its $CMDHOST_ variable.",
		Flags:  ServeFlags(),
		Action: runServe,
	}
}

func runServe(c *cli.Context) error {
	// Before the config file sets flags: a token there is not in `ps`.
	tokenFlagged := c.IsSet("admin-token")
	if err := applyConfigFile(c); err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	cfg, err := serveConfig(c)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	if tokenFlagged {
		cfg.Logger.Warn("--admin-token shows the token to anyone who can list processes (ps): give it with --admin-token-file FILE or CMDHOST_ADMIN_TOKEN instead")
	}
	warnIfNoModules(cfg.Logger, cfg.PluginsDir)
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.OnServing = func() { notifySystemd("READY=1") }
	cfg.OnStopping = func() { notifySystemd("STOPPING=1") }
	if endpoint := c.String("otlp-endpoint"); endpoint != "" {
		instance := cfg.ExecutorID
		if cfg.Broker.ClientID != "" {
			instance += "/" + cfg.Broker.ClientID
		}
		tp, err := otlp.Provider(otlp.Config{Endpoint: endpoint, Instance: instance, Version: base.ReadBuildVersion().Version})
		if err != nil {
			return cli.Exit(err, base.ExitUsage)
		}
		// After Run: the spans of the last requests go out before exit.
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tp.Shutdown(sctx)
		}()
		cfg.Observe.Tracing = tp
	}
	srv, err := host.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Run(ctx); session.Refused(err) {
		return cli.Exit(fmt.Sprintf("%v\n%s", err, hostconn.RefusalHint(err)), hostconn.ExitRefused)
	} else if err != nil {
		return err
	}
	return nil
}

// serveConfig reads and checks serve's flags: the one place they are
// resolved into the server's settings.
func serveConfig(c *cli.Context) (host.Config, error) {
	cfg := host.Config{
		PluginsDir: c.String("plugins"),
		ExecutorID: c.String("id"),
		Broker: host.BrokerConfig{
			ClientID:        c.String("client-id"),
			ShareGroup:      c.String("share"),
			NestedNoAck:     c.Bool("nested-no-ack"),
			MaxRequestBytes: int(base.SizeOf(c, "max-request-bytes")),
			SessionExpiry:   c.Duration("session-expiry"),
		},
		Embedded: host.EmbeddedConfig{
			Listen:        c.String("listen"),
			MaxClients:    c.Int("broker-max-clients"),
			MaxInflight:   c.Int("broker-max-inflight"),
			QueueBytes:    int(base.SizeOf(c, "broker-queue-bytes")),
			InflightBytes: int(base.SizeOf(c, "broker-inflight-bytes")),
			HeldBytes:     int(base.SizeOf(c, "broker-held-bytes")),
		},
		Limits: host.LimitsConfig{
			ExecTimeout:      c.Duration("exec-timeout"),
			Drain:            c.Duration("drain"),
			Pool:             c.Int("pool"),
			IdleTimeout:      c.Duration("idle-timeout"),
			MaxDepth:         c.Int("max-depth"),
			MaxExpiry:        c.Duration("max-expiry"),
			MaxModuleBytes:   int(base.SizeOf(c, "max-module-size")),
			MaxResponseBytes: int(base.SizeOf(c, "max-response-bytes")),
			MaxGuestMemory:   base.SizeOf(c, "max-guest-memory"),
		},
		Store: host.StoreConfig{
			ReuseMaxBytes:  base.SizeOf(c, "reuse-max-bytes"),
			MaxDedupBytes:  base.SizeOf(c, "max-dedup-bytes"),
			OutboxTakeover: c.Duration("outbox-takeover"),
		},
		Plugins: host.PluginsConfig{TrustFiles: c.StringSlice("trust")},
		Observe: host.ObserveConfig{MetricsAddr: c.String("metrics"), Events: c.Bool("events")},
	}
	if cfg.Plugins.PullFrom = c.StringSlice("pull-from"); len(cfg.Plugins.PullFrom) > 0 {
		reg, err := registry.RegistryConfig(c)
		if err != nil {
			return cfg, err
		}
		cfg.Plugins.Registry = host.RegistryAccess{DockerConfig: reg.DockerConfig, Username: reg.Username, PasswordFile: reg.PasswordFile, PlainHTTP: reg.PlainHTTP}
	}
	for _, f := range cfg.Plugins.TrustFiles {
		if _, err := signing.ReadPublicKey(f); err != nil {
			return cfg, fmt.Errorf("--trust: %w", err)
		}
	}
	if err := secretSettings(c, &cfg); err != nil {
		return cfg, err
	}
	if cfg.PluginsDir == "" {
		return cfg, errors.New("--plugins DIR is required (or plugins: DIR in the --config file, or CMDHOST_PLUGINS)")
	}
	if err := checkPluginsDir(cfg.PluginsDir); err != nil {
		return cfg, err
	}
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = hostconn.Hostname()
	}
	if len(c.StringSlice("broker")) > 0 {
		us, err := hostconn.BrokerURLs(c)
		if err != nil {
			return cfg, err
		}
		cfg.Broker.URL, cfg.Broker.Failover = us[0], us[1:]
		// The secured broker's flags (brokerauth.go).
		if cfg.Broker.Auth, err = hostconn.BrokersAuth(c, us); err != nil {
			return cfg, err
		}
	} else if c.IsSet("username") || c.IsSet("password-file") || c.IsSet("tls-ca") || c.IsSet("tls-cert") || c.IsSet("tls-key") || c.IsSet("tls-server-name") || c.IsSet("sat-file") {
		return cfg, errors.New("--username, --password-file, --sat-file and the --tls-* flags are for an external broker (--broker); the embedded broker needs none")
	}
	if err := embeddedSecurity(c, &cfg); err != nil {
		return cfg, err
	}
	if err := identitySettings(c, &cfg); err != nil {
		return cfg, err
	}
	if err := stateSettings(c, &cfg); err != nil {
		return cfg, err
	}
	if cfg.Limits.ExecTimeout < 0 || cfg.Limits.Drain < 0 || cfg.Limits.IdleTimeout < 0 || cfg.Limits.Pool <= 0 || cfg.Store.ReuseMaxBytes < 0 || cfg.Store.OutboxTakeover < 0 {
		return cfg, errors.New("--exec-timeout, --drain, --idle-timeout, --outbox-takeover and --reuse-max-bytes must not be negative, --pool must be positive")
	}
	if cfg.Limits.MaxDepth <= 0 {
		return cfg, errors.New("--max-depth must be positive")
	}
	if cfg.Limits.MaxExpiry < time.Second {
		return cfg, errors.New("--max-expiry must be at least 1s (message expiry counts whole seconds)")
	}
	if cfg.Broker.MaxRequestBytes <= 0 || cfg.Broker.MaxRequestBytes > maxMQTTPacket {
		return cfg, fmt.Errorf("--max-request-bytes must be between 1 and %d (MQTT's largest packet)", maxMQTTPacket)
	}
	if cfg.Embedded.MaxClients <= 0 || cfg.Embedded.MaxInflight <= 0 || cfg.Embedded.MaxInflight > math.MaxUint16 || cfg.Embedded.QueueBytes < 0 ||
		cfg.Embedded.InflightBytes <= 0 || cfg.Embedded.HeldBytes <= 0 {
		return cfg, errors.New("--broker-max-clients, --broker-inflight-bytes and --broker-held-bytes must be positive, --broker-max-inflight between 1 and 65535, --broker-queue-bytes not negative")
	}
	if cfg.Limits.MaxGuestMemory <= 0 {
		return cfg, errors.New("--max-guest-memory must be positive")
	}
	if cfg.Limits.MaxModuleBytes <= 0 {
		return cfg, errors.New("--max-module-size must be positive")
	}
	if cfg.Limits.MaxResponseBytes <= 0 || cfg.Limits.MaxResponseBytes > wasm.MaxResponseBytesLimit {
		return cfg, fmt.Errorf("--max-response-bytes must be between 1 and %d (MQTT's largest packet, less room for properties)", wasm.MaxResponseBytesLimit)
	}
	// The flags say "0: none, never, off"; host.Config says host.Off.
	cfg.Limits.ExecTimeout = setting.ZeroIsOff(cfg.Limits.ExecTimeout)
	cfg.Limits.IdleTimeout = setting.ZeroIsOff(cfg.Limits.IdleTimeout)
	cfg.Limits.Drain = setting.ZeroIsOff(cfg.Limits.Drain)
	cfg.Store.OutboxTakeover = setting.ZeroIsOff(cfg.Store.OutboxTakeover)
	cfg.Store.ReuseMaxBytes = setting.ZeroIsOff(cfg.Store.ReuseMaxBytes)
	if cfg.Store.MaxDedupBytes < 0 {
		return cfg, errors.New("--max-dedup-bytes must not be negative (0: no bound but the entries')")
	}
	cfg.Store.MaxDedupBytes = setting.ZeroIsOff(cfg.Store.MaxDedupBytes)
	switch {
	case !c.IsSet("session-expiry") && cfg.Broker.ShareGroup == "":
		cfg.Broker.SessionExpiry = session.DefaultExpiry
	case !c.IsSet("session-expiry"):
		cfg.Broker.SessionExpiry = defaultReplicaSessionExpiry
	case cfg.Broker.SessionExpiry < 0 || cfg.Broker.SessionExpiry > math.MaxUint32*time.Second:
		return cfg, errors.New("--session-expiry must be between 0 and 136 years (MQTT counts it in 32-bit seconds)")
	case cfg.Broker.SessionExpiry == 0:
		cfg.Broker.SessionExpiry = host.Off
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cfg, fmt.Errorf("--log-level: want debug, info, warn or error")
	}
	dir, err := base.CacheDir(c)
	if err != nil {
		return cfg, err
	}
	cfg.CacheDir = dir
	cfg.Logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
	return cfg, nil
}

// embeddedSecurityFlags are the embedded broker's own: who may connect to
// it (the --tls-* flags are the host's, as a client of --broker).
func embeddedSecurityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "listen-tls", Usage: "also listen for MQTT over TLS at `ADDR` (e.g. 0.0.0.0:8883); needs --listen-cert and --listen-key", EnvVars: []string{"CMDHOST_LISTEN_TLS"}},
		&cli.StringFlag{Name: "listen-cert", Usage: "the TLS listener's certificate `FILE` (PEM, the chain after it)", EnvVars: []string{"CMDHOST_LISTEN_CERT"}},
		&cli.StringFlag{Name: "listen-key", Usage: "the TLS listener's private key `FILE` (PEM)", EnvVars: []string{"CMDHOST_LISTEN_KEY"}},
		&cli.StringFlag{Name: "listen-client-ca", Usage: "require TLS clients to show a certificate this CA `FILE` (PEM) signed; its common name is the client's user name", EnvVars: []string{"CMDHOST_LISTEN_CLIENT_CA"}},
		&cli.StringFlag{Name: "users", Usage: "users `FILE` of the embedded broker (name:bcrypt hash lines, written by `cmdhost user add`): clients must log in as one of them; re-read when it changes", EnvVars: []string{"CMDHOST_USERS"}},
		&cli.StringFlag{Name: "acl", Usage: "ACL `FILE` of the embedded broker (user, call, admin, events lines; docs/cli.md): which commands each user may call, and whether the admin ops and events; every client may read its own replies only. Needs --users or --listen-client-ca", EnvVars: []string{"CMDHOST_ACL"}},
		&cli.StringFlag{Name: "sat-key", Usage: "admit clients that log in with a Kubernetes service account token (K8S-SAT) signed by a key of this `FILE` (the issuer's public keys: PEM, or a JWKS such as `kubectl get --raw /openid/v1/jwks` prints); re-read when it changes", EnvVars: []string{"CMDHOST_SAT_KEY"}},
		&cli.StringFlag{Name: "sat-audience", Usage: "the `AUDIENCE` the service account tokens must be for (with --sat-key; default " + broker.DefaultSATAudience + ", as the Azure IoT Operations broker)", EnvVars: []string{"CMDHOST_SAT_AUDIENCE"}},
		&cli.BoolFlag{Name: "allow-anonymous", Usage: "let the embedded broker admit anyone on a --listen or --listen-tls address other than loopback (refused without --users or --listen-client-ca otherwise)", EnvVars: []string{"CMDHOST_ALLOW_ANONYMOUS"}},
	}
}

// embeddedSecurity reads and checks the embedded broker's security flags
// into cfg: they go together, the users file must read, and a listener
// others can reach must not admit anyone unless --allow-anonymous.
func embeddedSecurity(c *cli.Context, cfg *host.Config) error {
	cfg.Embedded.ListenTLS, cfg.Embedded.ListenCertFile, cfg.Embedded.ListenKeyFile = c.String("listen-tls"), c.String("listen-cert"), c.String("listen-key")
	cfg.Embedded.ListenClientCAFile, cfg.Embedded.UsersFile, cfg.Embedded.AllowAnonymous = c.String("listen-client-ca"), c.String("users"), c.Bool("allow-anonymous")
	cfg.Embedded.ACLFile = c.String("acl")
	cfg.Embedded.SATKeyFile, cfg.Embedded.SATAudience = c.String("sat-key"), c.String("sat-audience")
	if cfg.Broker.URL != nil {
		if cfg.Embedded.ListenTLS != "" || cfg.Embedded.ListenCertFile != "" || cfg.Embedded.ListenKeyFile != "" || cfg.Embedded.ListenClientCAFile != "" || cfg.Embedded.UsersFile != "" || cfg.Embedded.ACLFile != "" || cfg.Embedded.AllowAnonymous || cfg.Embedded.SATKeyFile != "" || cfg.Embedded.SATAudience != "" {
			return errors.New("--listen-tls, --listen-cert, --listen-key, --listen-client-ca, --users, --acl, --sat-key, --sat-audience and --allow-anonymous are the embedded broker's: with --broker, secure that broker itself (docs/security.md)")
		}
		return nil
	}
	switch {
	case cfg.Embedded.ListenTLS != "" && (cfg.Embedded.ListenCertFile == "" || cfg.Embedded.ListenKeyFile == ""):
		return fmt.Errorf("--listen-tls %s needs the listener's certificate and key: --listen-cert FILE --listen-key FILE", cfg.Embedded.ListenTLS)
	case cfg.Embedded.ListenTLS == "" && (cfg.Embedded.ListenCertFile != "" || cfg.Embedded.ListenKeyFile != "" || cfg.Embedded.ListenClientCAFile != ""):
		return errors.New("--listen-cert, --listen-key and --listen-client-ca are the TLS listener's: give --listen-tls ADDR too")
	}
	if cfg.Embedded.UsersFile != "" {
		if _, err := passwd.Open(cfg.Embedded.UsersFile); err != nil {
			return fmt.Errorf("--users: %w (add a user with `cmdhost user add NAME --users %s`)", err, cfg.Embedded.UsersFile)
		}
	}
	if cfg.Embedded.SATAudience != "" && cfg.Embedded.SATKeyFile == "" {
		return errors.New("--sat-audience is the audience of the tokens --sat-key checks: give --sat-key FILE too")
	}
	if cfg.Embedded.SATKeyFile != "" {
		if _, err := jwt.ReadKeys(cfg.Embedded.SATKeyFile); err != nil {
			return fmt.Errorf("--sat-key: %w", err)
		}
	}
	if cfg.Embedded.ACLFile != "" {
		if cfg.Embedded.UsersFile == "" && cfg.Embedded.ListenClientCAFile == "" && cfg.Embedded.SATKeyFile == "" {
			return errors.New("--acl grants users their topics: give --users FILE, --listen-client-ca FILE or --sat-key FILE too, so that clients say who they are")
		}
		if _, err := broker.ReadACL(cfg.Embedded.ACLFile); err != nil {
			return fmt.Errorf("--acl: %w", err)
		}
	}
	return host.CheckEmbeddedAccess(*cfg)
}

// maxMQTTPacket is the largest packet MQTT can frame (a remaining length
// of 268,435,455 bytes and its 5-byte fixed header).
const maxMQTTPacket = 268435455 + 5
