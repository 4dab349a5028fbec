package host

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/commands"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/gate"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/metrics"
	"github.com/cmdhost/cmdhost/internal/nested"
	"github.com/cmdhost/cmdhost/internal/oci"
	"github.com/cmdhost/cmdhost/internal/outbox"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/secret"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/state"
	"github.com/cmdhost/cmdhost/internal/stateaio"
	"github.com/cmdhost/cmdhost/internal/statestore"
	"github.com/cmdhost/cmdhost/internal/trigger"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// Off, in a Config field whose comment names it, turns off what the
// field bounds or times: no timeout, never, no bound. Zero is never off:
// it is the field's default.
const Off = -1

// DefaultDrain is Config.Limits.Drain when it is not set.
const DefaultDrain = 10 * time.Second

// DefaultOutboxTakeover is Config.Store.OutboxTakeover when it is not set.
const DefaultOutboxTakeover = cache.DefaultOutboxClaimIdle

// Config configures a Server: serve's settings, checked by the caller,
// grouped as serve --help groups its flags (the broker, the embedded
// broker, the callers' identity, limits, the store and state, plugins,
// admin, observability). Zero fields take the defaults of the packages
// they go to; Off turns off the fields that say so.
type Config struct {
	// PluginsDir is the plugins folder. Required.
	PluginsDir string
	// ExecutorID is the executor id (serve --id).
	ExecutorID string
	// CacheDir is the compilation cache's folder; "" compiles every start.
	CacheDir string
	// Broker is the MQTT broker the host serves on and its session there.
	Broker BrokerConfig
	// Embedded is the embedded broker, started when Broker.URL is nil.
	Embedded EmbeddedConfig
	// Callers is how a request's verified caller is known on an external
	// broker.
	Callers CallersConfig
	// Limits are the commands' defaults and the host's bounds.
	Limits LimitsConfig
	// Store is the dedup store, the reuse cache and the handlers' state.
	Store StoreConfig
	// Plugins is which modules load (signatures) and where the host pulls
	// them from.
	Plugins PluginsConfig
	// Admin is the token of the admin ops that change state.
	Admin AdminConfig
	// Observe is what the host reports: metrics, events, traces.
	Observe ObserveConfig
	// Logger receives the host's log; nil discards it.
	Logger *slog.Logger
	// OnServing, when set, is called once the host serves (the plugins
	// loaded, the executor and the triggers subscribed), and OnStopping
	// once it begins to stop: a supervisor's readiness (systemd's
	// sd_notify) hangs on them.
	OnServing, OnStopping func()
}

// BrokerConfig is the MQTT broker the host serves on (serve's "Broker"
// flags) and the executor's session on it.
type BrokerConfig struct {
	// URL is the MQTT broker to serve on; nil starts the embedded broker
	// on Config.Embedded.Listen.
	URL *url.URL
	// Failover are more brokers of URL's cluster, tried in turn when the
	// one before cannot be reached (session.Config.Failover).
	Failover []*url.URL
	// Auth is how the host's clients (the executor, the nested-call
	// invoker) log in to URL and check its certificate: TLS CA, client
	// certificate, user name, password file (admin.BrokerAuth). Unused
	// with the embedded broker, which the host reaches in process.
	Auth admin.BrokerAuth
	// ClientID is the MQTT client id (default the executor id);
	// ShareGroup, if set, makes the requests' subscriptions shared so that
	// replicas split them.
	ClientID, ShareGroup string
	// SessionExpiry is how long the broker keeps the executor's session
	// after a disconnect (session.Config.Expiry); 0: its default (10
	// minutes), Off: none.
	SessionExpiry time.Duration
	// MaxRequestBytes is the largest packet a request may be: the
	// embedded broker's Maximum Packet Size (announced in CONNACK, a larger
	// packet ends its sender's connection before it is read), and the one
	// the executor announces in its CONNECT, so that no broker delivers it
	// a larger request (session.Config.MaxPacketSize); 0: 8 MiB.
	MaxRequestBytes int
	// NestedNoAck sends nested calls to other executors as plain v1.0
	// requests (nested.Config.RemoteAck off).
	NestedNoAck bool
}

// EmbeddedConfig is the embedded broker (serve's "Embedded broker" and
// "Embedded broker security" flags), used when Config.Broker.URL is nil.
type EmbeddedConfig struct {
	// Listen is the embedded broker's address.
	Listen string
	// The embedded broker's security (broker.Config, whose doc says who
	// gets in): ListenTLS a TLS listener with the certificate and key in
	// ListenCertFile and ListenKeyFile, and with ListenClientCAFile client
	// certificates required; UsersFile its users file; ACLFile what each
	// user may publish and subscribe to (broker.ReadACL); AllowAnonymous
	// lets a listener off loopback admit anyone.
	ListenTLS, ListenCertFile, ListenKeyFile, ListenClientCAFile string
	UsersFile, ACLFile                                           string
	AllowAnonymous                                               bool
	// SATKeyFile admits clients that log in with a Kubernetes service
	// account token signed by one of its keys (PEM or JWKS), for the
	// audience SATAudience ("": broker.DefaultSATAudience).
	SATKeyFile, SATAudience string
	// MaxClients, MaxInflight, InflightBytes, HeldBytes and QueueBytes
	// bound the broker's clients (broker.Config MaxClients, MaxInflight,
	// MaxInflightBytes, MaxHeldBytes, ClientQueueBytes); 0: the broker's
	// defaults.
	MaxClients, MaxInflight, InflightBytes, HeldBytes, QueueBytes int
	// StateProtocolOff does not serve the Azure IoT Operations state store
	// protocol (package statestore) on the embedded broker. By default a
	// host with a state store and its embedded broker serves it, so that
	// the Azure SDKs' state store clients share keys with the plugins;
	// with an external broker it is never served (that broker's clients
	// are not the embedded broker's to vouch for and reach).
	StateProtocolOff bool
}

// CallersConfig is how the host knows a request's caller on an external
// broker (serve's "Callers' identity" flags); on its embedded broker it
// knows it anyway.
type CallersConfig struct {
	// TrustBrokerIdentity says that Broker.URL is another cmdhost's
	// embedded broker: the caller it stamps on each request (user name,
	// client id) is taken as the request's verified caller, as on the
	// host's own embedded broker (rpc.Config.TrustBrokerClientID). Never
	// set it for another broker: its clients could write that stamp
	// themselves.
	TrustBrokerIdentity bool
	// TopicToken says that the broker's ACL ties the request topic level
	// {TopicToken} to the publisher's user name (mosquitto's
	// `pattern write rpc/ID/+/%u`): its value is the request's verified
	// caller (rpc.Config.CallerTopicToken). "": none.
	TopicToken string
}

// LimitsConfig is the commands' defaults and the host's bounds (serve's
// "Requests and limits" flags).
type LimitsConfig struct {
	// ExecTimeout and Pool are the commands' defaults (plugins.Defaults):
	// the execution timeout of commands nothing else gives one (0:
	// plugins.DefaultExecTimeout, Off: none), and the instances per
	// plugin, which is also their concurrency.
	ExecTimeout time.Duration
	Pool        int
	// IdleTimeout releases a plugin's instances after so long without
	// calls; 0: wasm.DefaultIdleTimeout (5 minutes), Off: never.
	IdleTimeout time.Duration
	// MaxModuleBytes refuses larger module files; 0: the engine's default.
	MaxModuleBytes int
	// MaxGuestMemory bounds the memory of all plugin instances together
	// (wasm.Config.MaxGuestMemory); 0: wasm.DefaultMaxGuestMemory.
	MaxGuestMemory int64
	// MaxResponseBytes bounds each plugin's encoded responses unless its
	// operator file says otherwise; 0: the engine's default (4 MiB).
	MaxResponseBytes int
	// MaxExpiry is the longest message expiry a request may ask for; 0:
	// rpc.DefaultMaxExpiry (an hour).
	MaxExpiry time.Duration
	// MaxDepth bounds the chain of nested calls; 0: DefaultMaxDepth.
	MaxDepth int
	// Drain bounds how long a stop waits for requests in flight; 0:
	// DefaultDrain, Off: it waits for none.
	Drain time.Duration
}

// StoreConfig is where the host keeps what outlives a request: the dedup
// store, the reuse cache and the handlers' state (serve's "Store and
// state" flags).
type StoreConfig struct {
	// URL is a dedup store shared by replicas and restarts,
	// redis://[USER@]HOST:PORT/DB or rediss:// over TLS, or a master
	// through Sentinel or a cluster (cache.RedisURLForms; rpc.RedisStores),
	// which keeps the handlers' state too (StateDir); "": in memory
	// (rpc.MemoryStores). The host prints it without its password.
	URL string
	// CAFile, CertFile and KeyFile are a rediss:// URL's CA and client
	// certificate files (rpc.RedisConfig); "": the system's roots, no
	// client certificate.
	CAFile, CertFile, KeyFile string
	// PasswordFile is the file of the password of URL's user, read again
	// at each new connection to Redis; Password is the password itself,
	// for an embedder that has it in hand (or CMDHOST_STORE_PASSWORD),
	// used when PasswordFile is "". Both "": the URL's password, if any.
	PasswordFile, Password string
	// ReuseMaxBytes bounds the reuse cache of idempotent replies; 0: its
	// default (64 MiB), Off: reuse off.
	ReuseMaxBytes int64
	// MaxDedupBytes bounds the replies the dedup store keeps for
	// duplicates (rpc.Config.MaxDedupBytes); 0: its default (256 MiB),
	// Off: no bound but the entries'.
	MaxDedupBytes int64
	// StateDir is the folder of the handlers' state store without URL
	// (package state: a Pebble database, one process at a time). The
	// outcome of each request to a non-idempotent command is kept there
	// too, committed with the call's writes (rpc.StateStores), so that
	// exactly-once holds through a kill -9. "": no state store (handlers'
	// state calls answer unavailable; outcomes in memory).
	//
	// With URL, the handlers' state is in URL's Redis instead
	// (cache.RedisState, rpc.RedisConfig.State): shared by every replica
	// naming it, each call's writes committed in the script that stores
	// its request's outcome. StateDir must then be "" (NoState: none).
	StateDir string
	// NoState runs without a state store, with URL too: the handlers'
	// state calls answer unavailable.
	NoState bool
	// StateLimits bound the state store: its total bytes, a namespace's
	// default keys and bytes, a key, a value, a call's writes
	// (state.Limits; zero fields: its defaults).
	StateLimits state.Limits
	// StateAIO keeps the handlers' state in the Azure IoT Operations
	// state store of Broker.URL (package stateaio: the broker's state
	// store protocol, spoken as a client), not in StateDir, which then
	// keeps the outcomes of non-idempotent requests and the outbox only
	// (and is required). It needs an external broker and no URL.
	StateAIO bool
	// OutboxTakeover is how long a message of the outbox in URL's Redis
	// stays with the replica that read it, unsent, before another replica
	// of the same executor id takes it over and sends it
	// (cache.RedisOutboxConfig.ClaimIdle): a replica killed between
	// reading its messages and the broker's acknowledgement leaves them
	// to the others after it. Shorter sends a dead replica's messages
	// sooner; a replica that stalls longer than it (a send the broker
	// does not acknowledge in time: 10 s) sees its messages sent by
	// another too, with the same ids. 0: DefaultOutboxTakeover; Off:
	// never (a replica's messages wait for it to start again with the
	// same client id). Without URL it does nothing: the state folder's
	// outbox is this host's alone.
	OutboxTakeover time.Duration
}

// PluginsConfig is which modules the host loads and where it may pull
// them from (serve's "Plugin trust and registries" flags).
type PluginsConfig struct {
	// TrustFiles are Ed25519 public key files (PEM; internal/signing):
	// with any, a module is loaded only when its signature file
	// NAME.wasm.sig is by one of them (plugins.Config.Trust), at every
	// load and reload. None: no signature is needed.
	TrustFiles []string
	// PullFrom are the OCI registries (HOST[:PORT]) the install op may
	// have the host pull a module from itself, with Registry's
	// credentials; none: the host pulls nothing (a client sends the
	// module).
	PullFrom []string
	Registry RegistryAccess
}

// AdminConfig is the admin ops' token (serve's "Admin" flags).
type AdminConfig struct {
	// TokenFile is the file of the token that allows the admin ops that
	// change state, read again at each such op (a rotated token counts at
	// once); Token is the token itself, for an embedder that has it in
	// hand, used when TokenFile is "". Both "": those ops are refused.
	TokenFile string
	Token     string
}

// ObserveConfig is what the host reports of itself (serve's
// "Observability" flags; Config.Logger takes its log).
type ObserveConfig struct {
	// MetricsAddr serves Prometheus metrics at http://ADDR/metrics; "":
	// off.
	MetricsAddr string
	// Events publishes timeout events as JSON telemetry on
	// admin.EventsTopic.
	Events bool
	// Tracing makes OpenTelemetry spans of the requests the host runs, its
	// nested calls and its calls to other hosts, with W3C trace context
	// read from and written to MQTT user properties; nil: none.
	Tracing trace.TracerProvider
}

// RegistryAccess is how a host logs in to the registries it pulls
// from: a docker config file, or a user and the file of its password;
// PlainHTTP for registries without TLS.
type RegistryAccess struct {
	DockerConfig, Username, PasswordFile string
	PlainHTTP                            bool
}

// pull is the admin ops' Pull: the module of ref from a registry of
// cfg.PullFrom, at most max bytes, and its signature file if the
// artifact carries one.
func (s *Server) pull(ctx context.Context, ref string, max int) (module, sig []byte, err error) {
	bare := strings.TrimPrefix(ref, oci.Scheme)
	registry, _, _ := strings.Cut(bare, "/")
	if !slices.Contains(s.cfg.Plugins.PullFrom, registry) {
		return nil, nil, fmt.Errorf("registry %q is not one this host pulls from (serve --pull-from)", registry)
	}
	r := s.cfg.Plugins.Registry
	p, err := oci.Pull(ctx, bare, oci.Config{DockerConfig: r.DockerConfig, Username: r.Username, PasswordFile: r.PasswordFile,
		PlainHTTP: r.PlainHTTP, MaxBytes: int64(max)})
	return p.Module, p.Signature, err
}

// Server is one cmdhost: the plugins folder served over MQTT with hot
// reload, the admin ops, nested calls, metrics and timeout events. New
// builds it; Run serves until its context ends and then stops it.
//
// Three pairs of parts need each other, and the Server is where each loop
// is closed, once, before anything runs: the executor reports to the
// metrics and the events, which read its gauges (dedupLen, reuseStats) and
// publish through it (publishEvent); the engine runs the nested calls of
// its plugins through a dispatcher that runs local commands on the
// manager that loads into that engine (set in Run before the executor
// starts). Each loop goes through a method of the Server that reads a
// field set once.
type Server struct {
	cfg      Config
	log      *slog.Logger
	embedded *broker.Embedded // nil with Config.Broker.URL
	broker   *url.URL
	engine   *wasm.Engine
	plugins  *plugins.Manager
	metrics  *metrics.Collector
	started  atomic.Bool  // the executor started: it serves the plugins loaded so far
	loaded   atomic.Bool  // Run's LoadAll returned and the executor serves what it loaded: /readyz asks the executor from then on
	toLoad   atomic.Int64 // the plugin files Run's LoadAll found, for /readyz
	// watchErr is why the plugins folder is not watched, set when Watch
	// returns an error (nil: no such error); /readyz reports it.
	watchErr atomic.Pointer[error]
	events   events.Sink
	publish  *events.Publisher // nil without Config.Observe.Events
	exec     *rpc.Executor
	admin    *adminops.Ops
	gate     *gate.Gate  // who may call the plugins' commands, how often (gate.go)
	gateDone io.Closer   // closes the gate's Redis client; nil: none
	state    *state.Disk // the handlers' state store; nil without Config.Store.StateDir
	// aio is the handlers' state store with Config.Store.StateAIO (state then
	// keeps only the outcomes and the outbox); nil otherwise.
	aio *stateaio.Store
	// stateProto serves the Azure IoT Operations state store protocol
	// over state on the embedded broker; nil when it is not served.
	stateProto *statestore.Server
	triggers   *trigger.Receiver
	// outbox sends the messages handlers publish while Run serves
	// (startOutbox); nil before and after.
	outbox atomic.Pointer[outbox.Outbox]
	// triggerNotes is why each trigger not subscribed is not, as last
	// logged (triggers.go); read and written by Run's goroutines in turn.
	triggerNotes map[string]string
}

// ready is the readiness /readyz reports: the plugins are loaded and the
// executor serves them (it serves each batch of loads as it is published,
// from before the first: Run), the executor is connected and subscribed,
// the broker acknowledges its replies (rpc Executor.Ready), the state
// store writes (stateReady), and the plugins folder is watched (hot
// reload works).
// The probes are served from the start of Run, so during a cold start it
// says what is still loading.
func (s *Server) ready() error {
	if !s.loaded.Load() {
		msg := "starting: " + s.loadingProgress()
		if !s.started.Load() {
			msg += "; connecting to the broker"
		}
		return errors.New(msg)
	}
	if err := s.exec.Ready(); err != nil {
		return err
	}
	if err := s.stateReady(); err != nil {
		return err
	}
	if p := s.watchErr.Load(); p != nil {
		return *p
	}
	return s.plugins.WatchErr()
}

// loadingProgress says how far the first load of the plugins is:
// "loading plugins (2 of 5 loaded, 1 failed; still loading: a, b)". The
// plugins waiting for a compiler slot are not named yet.
func (s *Server) loadingProgress() string {
	var loaded, failed int
	var loading []string
	for _, st := range s.plugins.Status() {
		switch st.State {
		case plugins.StateServing:
			loaded++
		case plugins.StateLoading:
			loading = append(loading, st.Name)
		case plugins.StateFailed:
			failed++
		}
	}
	msg := fmt.Sprintf("loading plugins (%d of %d loaded, %d failed", loaded, s.toLoad.Load(), failed)
	if len(loading) > 0 {
		msg += "; still loading: " + strings.Join(loading, ", ")
	}
	return msg + ")"
}

// dial is how the server's own clients reach the broker: in process when
// it is the embedded one (broker.DialInProcess), else nil (TCP).
func (s *Server) dial() func(context.Context, autopaho.ClientConfig, *url.URL) (net.Conn, error) {
	if s.embedded == nil {
		return nil
	}
	return func(ctx context.Context, _ autopaho.ClientConfig, _ *url.URL) (net.Conn, error) {
		return s.embedded.DialInProcess(ctx)
	}
}

// brokerAuth is the host's clients' Config.Broker.Auth on an external
// broker; none on the embedded one.
func (s *Server) brokerAuth() session.Auth {
	if s.embedded != nil {
		return session.Auth{}
	}
	return s.cfg.Broker.Auth
}

// failover are the brokers tried after Broker; none with the embedded
// broker.
func (s *Server) failover() []*url.URL {
	if s.embedded != nil {
		return nil
	}
	return s.cfg.Broker.Failover
}

// embeddedConfig is the embedded broker's configuration.
func embeddedConfig(cfg Config, log *slog.Logger) broker.Config {
	return broker.Config{Addr: cfg.Embedded.Listen, Logger: log, MaxPacketBytes: cfg.Broker.MaxRequestBytes,
		MaxClients: cfg.Embedded.MaxClients, MaxInflight: cfg.Embedded.MaxInflight, MaxInflightBytes: cfg.Embedded.InflightBytes,
		MaxHeldBytes: cfg.Embedded.HeldBytes, ClientQueueBytes: cfg.Embedded.QueueBytes,
		TLSAddr: cfg.Embedded.ListenTLS, TLSCertFile: cfg.Embedded.ListenCertFile, TLSKeyFile: cfg.Embedded.ListenKeyFile,
		TLSClientCAFile: cfg.Embedded.ListenClientCAFile, UsersFile: cfg.Embedded.UsersFile, ACLFile: cfg.Embedded.ACLFile, AllowAnonymous: cfg.Embedded.AllowAnonymous,
		SATKeyFile: cfg.Embedded.SATKeyFile, SATAudience: cfg.Embedded.SATAudience}
}

// CheckEmbeddedAccess refuses an embedded broker that others could reach
// and that would admit anyone (broker.Config.CheckAccess), so that the
// CLI says so as a usage error, before anything starts.
func CheckEmbeddedAccess(cfg Config) error {
	if cfg.Broker.URL != nil {
		return nil
	}
	return embeddedConfig(cfg, nil).CheckAccess()
}

// New builds a server and, with no Config.Broker.URL, starts the embedded
// broker. Run must follow: it releases everything New made.
func New(cfg Config) (_ *Server, err error) {
	cfg.Limits.Drain = setting.Or(cfg.Limits.Drain, DefaultDrain)
	s := &Server{cfg: cfg, log: logx.OrDiscard(cfg.Logger), broker: cfg.Broker.URL}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := CheckStateAIO(cfg); err != nil {
		return nil, err
	}
	if s.broker == nil {
		if s.embedded, err = broker.Start(embeddedConfig(cfg, s.log)); err != nil {
			return nil, err
		}
		// The executor's client id is the host's before it connects: no
		// client over TCP can take its session (the nested-call invoker's,
		// random, is reserved at its first connect).
		s.embedded.Reserve(executorClientID(cfg))
		s.broker = s.embedded.URL()
		s.log.Info("embedded broker listening", "url", redact.URL(s.broker))
		if addr := s.embedded.TLSAddr(); addr != "" {
			s.log.Info("embedded broker listening", "url", "mqtts://"+addr, "client_certificates", cfg.Embedded.ListenClientCAFile != "")
		}
	}
	if s.engine, err = wasm.NewEngine(wasm.Config{CacheDir: cfg.CacheDir, Logger: s.log, MaxGuestMemory: cfg.Limits.MaxGuestMemory}); err != nil {
		return nil, err
	}
	var trust []ed25519.PublicKey
	for _, f := range cfg.Plugins.TrustFiles {
		k, err := signing.ReadPublicKey(f)
		if err != nil {
			return nil, fmt.Errorf("trusted key: %w", err)
		}
		trust = append(trust, k)
	}
	s.plugins = plugins.NewManager(plugins.Config{Dir: cfg.PluginsDir, Engine: s.engine, Logger: s.log, Trust: trust,
		Plugin: wasm.PluginConfig{PoolSize: cfg.Limits.Pool, IdleTimeout: cfg.Limits.IdleTimeout, MaxModuleBytes: cfg.Limits.MaxModuleBytes,
			MaxResponseBytes: cfg.Limits.MaxResponseBytes},
		Defaults: plugins.Defaults{ExecTimeout: cfg.Limits.ExecTimeout, Concurrency: cfg.Limits.Pool}, TriggerStats: s.triggerStats})
	s.metrics = metrics.New(metrics.Sources{Plugins: s.plugins.Status, DedupLen: s.dedupLen, Reuse: s.reuseStats,
		Dedup: s.dedupStats, Session: s.sessionStats, Broker: s.brokerStats, GuestMemory: s.engine.GuestMemory,
		HTTP: s.engine.HTTPStats, State: s.metricsState, Outbox: s.outboxStats})
	// Timeout events go to the log, the metrics and, with Events, to MQTT
	// telemetry over the executor's connection.
	sinks := []events.Sink{events.Log(s.log), s.metrics}
	if cfg.Observe.Events {
		s.publish = events.NewPublisher(s.publishEvent)
		sinks = append(sinks, s.publish)
	}
	s.events = eventsWithPlugins(s.plugins.Origin, events.Multi(sinks...))
	switch {
	case cfg.Store.URL != "" && cfg.Store.StateDir != "":
		return nil, fmt.Errorf("state folder %s and a store: with a store, the handlers' state is kept in its Redis; give no state folder", cfg.Store.StateDir)
	case cfg.Store.URL != "" && !cfg.Store.NoState:
		s.log.Info("state store in the store's Redis", "store", redact.String(cfg.Store.URL))
	case cfg.Store.StateDir != "" && !cfg.Store.NoState:
		if s.state, err = state.OpenDisk(state.DiskConfig{Dir: cfg.Store.StateDir, Limits: cfg.Store.StateLimits, Logger: s.log}); err != nil {
			return nil, err
		}
		s.log.Info("state store open", "dir", cfg.Store.StateDir)
	}
	if err := s.newStateAIO(); err != nil { // stateaio.go
		return nil, err
	}
	s.exec, err = rpc.NewExecutor(rpc.Config{
		ExecutorID: cfg.ExecutorID, ShareGroup: cfg.Broker.ShareGroup, Logger: s.log,
		Session: session.Config{Broker: s.broker, Failover: s.failover(), Auth: s.brokerAuth(), ClientID: cfg.Broker.ClientID, Dial: s.dial(),
			Expiry: cfg.Broker.SessionExpiry, MaxPacketSize: cfg.Broker.MaxRequestBytes},
		ReuseMaxBytes: cfg.Store.ReuseMaxBytes, Observer: s.metrics, Events: s.events, MaxExpiry: cfg.Limits.MaxExpiry,
		Stores: s.stores(), Tracer: s.tracer(), State: s.stateBackend(), StateLimits: cfg.Store.StateLimits,
		// On the embedded broker the caller it stamps on a request (client
		// id, user) is one no client can forge: dedup shares are keyed by
		// it and handlers get it. So on another host's, when told.
		TrustBrokerClientID: s.embedded != nil || cfg.Callers.TrustBrokerIdentity,
		MaxDedupBytes:       cfg.Store.MaxDedupBytes,
		CallerTopicToken:    cfg.Callers.TopicToken,
	}, nil)
	if err != nil {
		return nil, err
	}
	if s.stateProto, err = s.newStateProtocol(); err != nil {
		return nil, err
	}
	if s.gate, s.gateDone, err = newGate(cfg, s); err != nil {
		return nil, err
	}
	if err := s.newTriggers(); err != nil { // triggers.go
		return nil, err
	}
	if s.admin, err = adminops.New(adminops.Config{Manager: s.plugins, Dir: cfg.PluginsDir, Token: cfg.Admin.Token, TokenFile: cfg.Admin.TokenFile, Reuse: s.exec.ReuseStats,
		ClientID: executorClientID(cfg), ShareGroup: cfg.Broker.ShareGroup, Logger: s.log, Admin: s.adminByIdentity(),
		MaxModuleBytes: cfg.Limits.MaxModuleBytes, MaxRequestBytes: cmp.Or(cfg.Broker.MaxRequestBytes, session.DefaultMaxPacketSize), Events: s.events,
		Pull: s.pullFunc(), State: s.adminState()}); err != nil {
		return nil, err
	}
	return s, nil
}

// pullFunc is pull when the host pulls from registries, else nil.
func (s *Server) pullFunc() func(ctx context.Context, ref string, max int) ([]byte, []byte, error) {
	if len(s.cfg.Plugins.PullFrom) == 0 {
		return nil
	}
	return s.pull
}

// stores makes the dedup store and the reuse cache where --store says:
// in the Redis at its URL; else with the outcomes in the state store
// when there is one, or in memory.
func (s *Server) stores() rpc.Stores {
	switch {
	case s.cfg.Store.URL != "":
		r := redisConfig(s.cfg)
		r.State = !s.cfg.Store.NoState
		return rpc.RedisStores(r)
	case s.aio != nil: // the outcomes in the state folder, around the writes
		return rpc.StateStores(s.aio)
	case s.state != nil:
		return rpc.StateStores(s.state)
	}
	return rpc.MemoryStores()
}

// stateBackend is the state store as the executor takes it: nil when
// there is none (a nil *state.Disk in the interface would not be nil).
func (s *Server) stateBackend() state.Backend {
	switch {
	case s.aio != nil:
		return s.aio
	case s.state == nil:
		return nil
	}
	return s.state
}

// redisConfig is how the host reaches the Redis of Config.Store.
func redisConfig(cfg Config) rpc.RedisConfig {
	r := rpc.RedisConfig{URL: cfg.Store.URL, CAFile: cfg.Store.CAFile, CertFile: cfg.Store.CertFile, KeyFile: cfg.Store.KeyFile}
	switch pw, file := cfg.Store.Password, cfg.Store.PasswordFile; {
	case file != "":
		r.Password = func() (string, error) { return secret.ReadFile(file) }
	case pw != "":
		r.Password = func() (string, error) { return pw, nil }
	}
	return r
}

// executorClientID is the executor's MQTT client id (rpc.Config's
// default: the executor id).
func executorClientID(cfg Config) string {
	if cfg.Broker.ClientID != "" {
		return cfg.Broker.ClientID
	}
	return cfg.ExecutorID
}

// Broker is the URL of the broker the server serves on: Config.Broker.URL or
// the embedded one.
func (s *Server) Broker() *url.URL { return s.broker }

// The methods that close the loops the Server comment names.
func (s *Server) dedupLen() int                  { return s.exec.DedupLen() }
func (s *Server) reuseStats() cache.ReuseStats   { return s.exec.ReuseStats() }
func (s *Server) dedupStats() cache.DedupStats   { return s.exec.DedupStats() }
func (s *Server) sessionStats() rpc.SessionStats { return s.exec.SessionStats() }

// brokerStats reads the embedded broker's counters; zero with an external
// broker.
func (s *Server) brokerStats() broker.Stats {
	if s.embedded == nil {
		return broker.Stats{}
	}
	return s.embedded.Stats()
}
func (s *Server) publishEvent(ctx context.Context, payload []byte) error {
	return s.exec.PublishTelemetry(ctx, admin.EventsTopic(s.cfg.ExecutorID), payload, "application/json")
}

// commands returns what the server serves now: the admin ops first (the
// executor keeps the first of two commands with one topic filter, and no
// plugin may take a host topic anyway), then the plugins' commands.
func (s *Server) commands() []rpc.Command {
	return append(s.hostCommands(), commands.ServedVia(s.plugins, s.cfg.Observe.Tracing != nil, s.gate)...)
}

// hostCommands are the host's own ops: admin, and the state protocol
// when it is served.
func (s *Server) hostCommands() []rpc.Command {
	host := s.admin.Commands()
	if s.stateProto != nil {
		host = append(host, s.stateProto.Command())
	}
	return host
}

// Run loads the plugins, serves them until ctx ends, and then stops: it
// lets the requests in flight finish (Config.Limits.Drain), disconnects and
// releases everything in the reverse order of its making. It returns an
// error when the server cannot start; a plugin that does not load is
// logged and does not stop the others.
func (s *Server) Run(ctx context.Context) error {
	defer s.close()
	// The probes first: /healthz answers during a cold start (which may
	// take a minute of compiling, and a liveness probe that is refused
	// restarts the process), /readyz says what is still loading, and a
	// metrics port in use fails the start before anything is compiled.
	if s.cfg.Observe.MetricsAddr != "" {
		ms, err := s.metrics.Listen(s.cfg.Observe.MetricsAddr, s.ready)
		if err != nil {
			return fmt.Errorf("serving metrics and probes on %s (--metrics): %w; free the port or choose another one", s.cfg.Observe.MetricsAddr, err)
		}
		defer closeWithin(5*time.Second, ms.Close)
		s.log.Info("metrics listening", "url", ms.URL())
	}
	if names, err := s.plugins.Names(); err == nil {
		s.toLoad.Store(int64(len(names)))
	}
	// With the embedded broker, the plugins load while the executor
	// starts, and it serves each batch of them as the manager publishes it
	// (followReloads): a plugin serves as soon as it is ready, not after
	// the last of a thousand (issue 40). The serving line, OnServing and a
	// ready /readyz still wait for the whole LoadAll (announce).
	changed := s.changes() // before the first load: no publish is missed
	loaded := make(chan struct{})
	loadCtx, stopLoading := context.WithCancel(ctx)
	go func() {
		defer close(loaded)
		for _, err := range s.plugins.LoadAll(loadCtx) {
			s.log.Error("plugin not loaded", "err", err)
		}
	}()
	defer func() { // a start that fails stops loading before closing the manager
		stopLoading()
		<-loaded
	}()
	if s.embedded == nil {
		// An external broker may keep the executor's session from before
		// a restart, with requests queued for every command it served:
		// they arrive as soon as it connects, and one whose plugin is not
		// loaded yet would be acknowledged as for no command, never run.
		// So the executor connects once every plugin is loaded. The
		// embedded broker keeps no session across restarts.
		select {
		case <-loaded:
		case <-ctx.Done():
		}
	}
	if err := s.startStateAIO(ctx); err != nil {
		return err
	}
	if s.publish != nil {
		s.log.Info("publishing timeout events", "topic", admin.EventsTopic(s.cfg.ExecutorID))
	}
	// SetCommands, unlike NewExecutor, serves the rest when it cannot
	// serve a command: one bad command never keeps the host from starting.
	if err := s.exec.SetCommands(ctx, s.commands()); err != nil {
		s.log.Error("commands not served", "err", err)
	}
	stopNested, err := s.startNested(ctx)
	if err != nil {
		return err
	}
	defer stopNested()
	defer s.startOutbox()()
	startCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = s.exec.Start(startCtx)
	cancel()
	if err != nil {
		return err
	}
	stopTriggers, err := s.startTriggers(ctx)
	if err != nil {
		s.stopExecutor()
		return err
	}
	s.started.Store(true)
	// Three goroutines live as long as ctx: the folder's watcher, the
	// re-sync of the executor with what the plugins serve (which
	// announces the start once the plugins are loaded), and a replica's
	// announcements (admin.ReplicasTopic; none for a lone host). Run waits
	// for them before it stops the executor, so that no re-sync races the
	// stop.
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		s.admin.Announce(ctx, nil, s.cfg.ExecutorID, func(ctx context.Context, topic string, payload []byte) error {
			return s.exec.PublishTelemetry(ctx, topic, payload, "application/json")
		})
	}()
	go func() {
		defer wg.Done()
		s.followReloads(ctx, changed, loaded)
	}()
	go func() {
		defer wg.Done()
		select { // the watcher starts where LoadAll ends
		case <-loaded:
		case <-ctx.Done():
			return
		}
		if err := s.plugins.Watch(ctx); err != nil && ctx.Err() == nil {
			// Hot reload has ended: /readyz says so until the host restarts.
			err = fmt.Errorf("hot reload off: watching the plugins folder %s stopped: %w; restart the host", s.cfg.PluginsDir, err)
			s.watchErr.Store(&err)
			s.log.Error("watching the plugins folder stopped", "dir", s.cfg.PluginsDir, "err", err)
		}
	}()
	<-ctx.Done()
	wg.Wait()
	stopTriggers() // before the executor: their handlers publish through its connection
	s.stopExecutor()
	return nil
}

// changes returns a channel that receives after every change of the
// served commands. Changes coalesce: a burst of them is one receive.
func (s *Server) changes() <-chan struct{} {
	changed := make(chan struct{}, 1)
	s.plugins.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	return changed
}

// followReloads re-syncs the executor with the served commands at every
// change until ctx ends, from the first batch of Run's LoadAll on; once
// LoadAll has ended (loaded is closed), it syncs once more and announces
// the start (announce).
// The topics are logged when they change (a reload of the same commands
// changes none).
func (s *Server) followReloads(ctx context.Context, changed, loaded <-chan struct{}) {
	var topics []string
	announced := false
	resync := func() {
		s.setTriggers(ctx)
		if err := s.exec.SetCommands(ctx, s.commands()); err != nil {
			s.log.Error("updating the served commands", "err", err)
		} else if now := s.exec.Filters(); !slices.Equal(now, topics) {
			topics = now
			commands, own := s.countTopics(topics)
			if announced {
				s.log.Info("serving", "commands", commands, "host_ops", own)
			} else {
				s.log.Info("serving the plugins loaded so far", "commands", commands, "host_ops", own, "plugin_files", s.toLoad.Load())
			}
			s.log.Debug("serving topics", "topics", topics)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-loaded:
			loaded = nil // a nil channel is never ready: once
			resync()
			topics, announced = s.announce(), true
		case <-changed:
			resync()
		}
	}
}

// announce says that the host serves: the plugins are loaded and the
// executor serves them. It marks the host ready, calls OnServing, and
// logs the line that says the host is ready for calls (make run's user
// waits for it), with the broker and id an invoker needs; it returns the
// topics served.
// Counts, not topics: a folder of many plugins would make it a page
// (the topics are at debug level, and in plugin list).
func (s *Server) announce() []string {
	s.loaded.Store(true)
	if s.cfg.OnServing != nil {
		s.cfg.OnServing()
	}
	filters := s.exec.Filters()
	commands, own := s.countTopics(filters)
	s.log.Info("serving", "executor", s.cfg.ExecutorID, "broker", redact.URL(s.broker), "commands", commands, "host_ops", own,
		"session_expiry", s.exec.SessionExpiry())
	s.log.Debug("serving topics", "topics", filters)
	return filters
}

// countTopics splits the executor's topic filters, one per command,
// into the plugins' commands and the host's own ops (admin, the state
// protocol), which are served first (commands).
func (s *Server) countTopics(filters []string) (commands, own int) {
	own = min(len(s.hostCommands()), len(filters))
	return len(filters) - own, own
}

// startNested gives the engine its nested-call dispatcher: local commands
// through the plugins manager, with the execution timeouts it resolved;
// remote ones through an invoker of its own on the same broker. The
// returned function disconnects that invoker; call it after the executor
// stopped.
func (s *Server) startNested(ctx context.Context) (func(), error) {
	ictx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	inv, err := rpc.NewInvoker(ictx, rpc.InvokerConfig{Session: session.Config{Broker: s.broker, Failover: s.failover(), Auth: s.brokerAuth(), Dial: s.dial()},
		Logger: s.log, Tracer: s.tracer()})
	if err != nil {
		return nil, fmt.Errorf("nested invocation: %w", err)
	}
	calls, err := nested.New(nested.Config{ExecutorID: s.cfg.ExecutorID, Resolver: s.plugins, Timeout: s.commandTimeout,
		Remote: inv, RemoteAck: !s.cfg.Broker.NestedNoAck, MaxDepth: s.cfg.Limits.MaxDepth, Events: s.events,
		Tracer: s.tracer(), Origin: s.plugins.Origin, Gate: s.gateLocal})
	if err != nil {
		_ = inv.Close()
		return nil, err
	}
	s.engine.SetNester(calls)
	return func() {
		s.engine.SetNester(nil)
		_ = inv.Close()
	}, nil
}

// startOutbox gives the engine its publisher (package outbox): the
// messages handlers publish go out on the executor's connection, a
// non-idempotent command's through the state store's outbox (outboxStore).
// The returned function stops it; what the store's outbox still holds
// goes at the next start (or, in Redis, from another replica).
func (s *Server) startOutbox() func() {
	o := outbox.New(outbox.Config{Store: s.outboxStore(), Send: s.exec.PublishMessage, ExecutorID: s.cfg.ExecutorID, Logger: s.log,
		Idempotent: func(command string) bool {
			c, ok := s.plugins.Command(command)
			return ok && c.Declared.Idempotent
		}})
	s.engine.SetPublisher(o)
	s.outbox.Store(o)
	return func() {
		s.engine.SetPublisher(nil)
		o.Close()
		s.outbox.Store(nil)
	}
}

// outboxStore is where non-idempotent calls' messages wait: the state
// folder's outbox; with Store, a stream per namespace in its Redis,
// shared by the replicas of this executor id (cache.RedisOutbox); nil
// without a state store.
func (s *Server) outboxStore() outbox.Store {
	if s.state != nil {
		return s.state
	}
	if o := s.exec.RedisOutbox(cache.RedisOutboxConfig{Group: s.cfg.ExecutorID, Consumer: executorClientID(s.cfg),
		ClaimIdle: setting.Or(s.cfg.Store.OutboxTakeover, DefaultOutboxTakeover)}); o != nil {
		return o
	}
	return nil
}

// outboxStats are the outbox's counters for the metrics.
func (s *Server) outboxStats() metrics.OutboxStats {
	o := s.outbox.Load()
	if o == nil {
		return metrics.OutboxStats{}
	}
	st := o.Stats()
	return metrics.OutboxStats{Sent: st.Sent, Dropped: st.Dropped, Retries: st.Retries, TakenOver: st.TakenOver, QueuedBytes: st.Queued}
}

// commandTimeout is a local command's execution timeout, as a request of
// it gets: a nested call of it is bounded alike.
func (s *Server) commandTimeout(command string) time.Duration {
	c, _ := s.plugins.Command(command)
	return c.Timeout
}

// stopExecutor lets the requests in flight finish within Config.Limits.Drain and
// disconnects the executor.
func (s *Server) stopExecutor() {
	if s.cfg.OnStopping != nil {
		s.cfg.OnStopping()
	}
	s.log.Info("stopping: finishing requests in flight", "drain", s.cfg.Limits.Drain)
	dctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.Limits.Drain, 0))
	defer cancel()
	if s.cfg.Broker.ShareGroup != "" {
		// A replica leaving its group hands its share of new requests to
		// the others at once, instead of letting them wait in its session.
		if err := s.exec.Unsubscribe(dctx); err != nil {
			s.log.Warn("unsubscribe", "err", err)
		}
	}
	if err := s.exec.Stop(dctx); err != nil {
		s.log.Warn("stop", "err", err)
	}
	s.log.Info("stopped")
}

// close releases what New made, the last made first: the executor (a
// no-op when Run stopped it; its reuse cache's goroutines otherwise), the
// events publisher (its queue gets 5 s to go out), the plugins (their
// calls get Config.Limits.Drain to finish), the engine, the embedded broker.
func (s *Server) close() {
	if s.exec != nil {
		_ = s.exec.Stop(context.Background())
	}
	if s.publish != nil {
		closeWithin(5*time.Second, s.publish.Close)
	}
	if s.plugins != nil {
		closeWithin(s.cfg.Limits.Drain, s.plugins.Close)
	}
	if s.engine != nil {
		_ = s.engine.Close(context.Background())
	}
	if s.embedded != nil {
		_ = s.embedded.Close()
	}
	if s.gateDone != nil {
		_ = s.gateDone.Close()
	}
	if s.stateProto != nil { // after the executor: no request reaches it any more
		s.stateProto.Close()
	}
	if s.aio != nil { // after the executor and the plugins: no call stages or commits any more
		_ = s.aio.Close()
	}
	if s.state != nil { // after the executor and the plugins: no call stages or commits any more
		_ = s.state.Close()
	}
}

// closeWithin calls close with a context that ends after d.
func closeWithin(d time.Duration, close func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = close(ctx)
}
