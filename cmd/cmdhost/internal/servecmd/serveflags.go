package servecmd

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/registry"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// serve's flag categories, in the order its help shows them: what a
// reader looks for together (docs/cli.md's serve section has the same).
const (
	CatBroker    = "Broker (an external one: --broker)"
	catEmbedded  = "Embedded broker (without --broker)"
	CatEmbedSec  = "Embedded broker security"
	catCallers   = "Callers' identity"
	CatLimits    = "Requests and limits"
	CatStore     = "Store and state"
	catPlugins   = "Plugin trust and registries"
	catAdmin     = "Admin"
	CatObserve   = "Observability"
	catUngrouped = ""
)

var ServeCategoryOrder = []string{catUngrouped, CatBroker, catEmbedded, CatEmbedSec, catCallers, CatLimits, CatStore, catPlugins, catAdmin, CatObserve}

// serveCategories puts each of serve's flags, by name, in its category.
var serveCategories = map[string]string{
	"config": catUngrouped, "plugins": catUngrouped, "id": catUngrouped,

	"broker": CatBroker, "client-id": CatBroker, "share": CatBroker, "session-expiry": CatBroker,
	"max-request-bytes": CatBroker, "nested-no-ack": CatBroker,
	"tls-ca": CatBroker, "tls-cert": CatBroker, "tls-key": CatBroker, "tls-server-name": CatBroker,
	"username": CatBroker, "password-file": CatBroker, "sat-file": CatBroker,

	"listen": catEmbedded, "broker-max-clients": catEmbedded, "broker-max-inflight": catEmbedded,
	"broker-inflight-bytes": catEmbedded, "broker-held-bytes": catEmbedded, "broker-queue-bytes": catEmbedded,
	"state-protocol": catEmbedded,

	"listen-tls": CatEmbedSec, "listen-cert": CatEmbedSec, "listen-key": CatEmbedSec, "listen-client-ca": CatEmbedSec,
	"users": CatEmbedSec, "acl": CatEmbedSec, "sat-key": CatEmbedSec, "sat-audience": CatEmbedSec, "allow-anonymous": CatEmbedSec,

	"caller-topic-token": catCallers, "trust-broker-identity": catCallers,

	"exec-timeout": CatLimits, "drain": CatLimits, "pool": CatLimits, "idle-timeout": CatLimits,
	"max-response-bytes": CatLimits, "max-guest-memory": CatLimits, "max-module-size": CatLimits,
	"max-expiry": CatLimits, "max-depth": CatLimits,

	"store": CatStore, "store-ca": CatStore, "store-cert": CatStore, "store-key": CatStore, "store-password-file": CatStore,
	"reuse-max-bytes": CatStore, "max-dedup-bytes": CatStore, "outbox-takeover": CatStore,
	"state": CatStore, "state-dir": CatStore, "state-max-bytes": CatStore, "state-namespace-bytes": CatStore, "state-namespace-keys": CatStore,

	"trust": catPlugins, "pull-from": catPlugins, "registry-config": catPlugins, "registry-user": catPlugins,
	"registry-password-file": catPlugins, "plain-http": catPlugins,

	"admin-token-file": catAdmin, "admin-token": catAdmin,

	"metrics": CatObserve, "otlp-endpoint": CatObserve, "events": CatObserve, "log-level": CatObserve,
}

// ServeFlags are serve's flags, each in its category (serveCategories),
// sorted by serveCategoryOrder; within one, in the order given here.
func ServeFlags() []cli.Flag {
	flags := []cli.Flag{
		configFlag(),
		// Required, but checked by serveConfig: it may come from --config.
		&cli.StringFlag{Name: "plugins", Usage: "plugins `DIR` (required)", EnvVars: []string{"CMDHOST_PLUGINS"}},
		&cli.StringFlag{Name: "id", Usage: "executor `ID` (default: the host name)", EnvVars: []string{"CMDHOST_ID"}},
		hostconn.BrokersFlag("MQTT broker `URL` (mqtt://host:port); none: start the embedded broker"),
		&cli.StringFlag{Name: "client-id", Usage: "MQTT client `ID` (default: the executor id)", EnvVars: []string{"CMDHOST_CLIENT_ID"}},
		&cli.StringFlag{Name: "share", Usage: "shared subscription `GROUP`: replicas split requests", EnvVars: []string{"CMDHOST_SHARE"}},
		&cli.DurationFlag{Name: "session-expiry", DefaultText: "10m alone, 5s with --share", Usage: "how long the broker keeps the host's session (its subscriptions and unacked requests) after a disconnect, in whole seconds; 0: none (docs/operations.md, Replicas)", EnvVars: []string{"CMDHOST_SESSION_EXPIRY"}},
		base.SizeFlag("max-request-bytes", broker.DefaultMaxPacketBytes, "largest request packet: the embedded broker's Maximum Packet Size (a larger packet ends its sender's connection before it is read) and the one the host announces to an external broker (which then does not deliver a larger request)", "CMDHOST_MAX_REQUEST_BYTES"),
		&cli.BoolFlag{Name: "nested-no-ack", Usage: "nested calls to other executors as plain v1.0 requests (no ack, no cancel), for executors without the ask extension", EnvVars: []string{"CMDHOST_NESTED_NO_ACK"}},
		&cli.StringFlag{Name: "listen", Value: hostconn.DefaultListen, Usage: "embedded broker `ADDR`", EnvVars: []string{"CMDHOST_LISTEN"}},
		&cli.IntFlag{Name: "broker-max-clients", Value: broker.DefaultMaxClients, Usage: "clients the embedded broker admits at once (the host's own not counted); beyond: CONNACK 0x89 server busy", EnvVars: []string{"CMDHOST_BROKER_MAX_CLIENTS"}},
		&cli.IntFlag{Name: "broker-max-inflight", Value: broker.DefaultMaxInflight, Usage: "QoS 1 messages a client of the embedded broker may leave unacknowledged; beyond, messages for it are dropped (counted) until it acknowledges", EnvVars: []string{"CMDHOST_BROKER_MAX_INFLIGHT"}},
		base.SizeFlag("broker-inflight-bytes", broker.DefaultMaxInflightBytes, "bytes of QoS 1 messages a client of the embedded broker may leave unacknowledged; beyond, messages for it are dropped (counted) until it acknowledges", "CMDHOST_BROKER_INFLIGHT_BYTES"),
		base.SizeFlag("broker-held-bytes", broker.DefaultMaxHeldBytes, "bytes the embedded broker holds for all its clients (unacknowledged, or queued for their sockets; the host's own not counted); beyond, the client holding the most is disconnected and its messages dropped", "CMDHOST_BROKER_HELD_BYTES"),
		base.SizeFlag("broker-queue-bytes", 0, "bytes the embedded broker queues for one client's socket; a client that falls further behind is disconnected (as is one whose socket takes nothing for 10s); 0: --broker-inflight-bytes plus --max-request-bytes (72MiB), above what a client that reads may be sent at once", "CMDHOST_BROKER_QUEUE_BYTES"),
		&cli.DurationFlag{Name: "exec-timeout", Value: base.DefaultExecTimeout, Usage: "execution timeout of commands that declare none", EnvVars: []string{"CMDHOST_EXEC_TIMEOUT"}},
		&cli.DurationFlag{Name: "drain", Value: 10 * time.Second, Usage: "how long a stop waits for requests in flight", EnvVars: []string{"CMDHOST_DRAIN"}},
		&cli.IntFlag{Name: "pool", Value: 4, Usage: "instances per plugin (its concurrent calls)", EnvVars: []string{"CMDHOST_POOL"}},
		&cli.DurationFlag{Name: "idle-timeout", Value: 5 * time.Minute, Usage: "release a plugin's instances after this long without calls (0: never)", EnvVars: []string{"CMDHOST_IDLE_TIMEOUT"}},
		base.SizeFlag("max-response-bytes", wasm.DefaultMaxResponseBytes, "largest reply a plugin may give (payload and properties); a plugin's operator file may set its own (maxResponseBytes)", "CMDHOST_MAX_RESPONSE_BYTES"),
		base.SizeFlag("max-guest-memory", wasm.DefaultMaxGuestMemory, "bound of all plugin instances' memory together: each instance reserves its memory limit and the runtime's overhead while it lives; a call that needs an instance past it waits (a nested call gets 503)", "CMDHOST_MAX_GUEST_MEMORY"),
		base.SizeFlag("max-module-size", wasm.DefaultMaxModuleBytes, "largest plugin module: a larger file is refused", "CMDHOST_MAX_MODULE_SIZE"),
		&cli.DurationFlag{Name: "max-expiry", Value: rpc.DefaultMaxExpiry, Usage: "longest message expiry honoured (at least 1s): a request asking for more gets 400, as its dedup entry would be kept that long", EnvVars: []string{"CMDHOST_MAX_EXPIRY"}},
		&cli.IntFlag{Name: "max-depth", Value: host.DefaultMaxDepth, Usage: "longest chain of nested calls (A calls B calls C...), the first caller included", EnvVars: []string{"CMDHOST_MAX_DEPTH"}},
		base.SizeFlag("reuse-max-bytes", 64<<20, "bound of the reuse cache of idempotent replies; 0 turns reuse off", "CMDHOST_REUSE_MAX_BYTES"),
		base.SizeFlag("max-dedup-bytes", rpc.DefaultMaxDedupBytes, "bound of the replies kept in memory for duplicates until their request expires; past it a reply is kept as a digest and a duplicate of its request gets 500, never a second run; 0: no bound but the entries'", "CMDHOST_MAX_DEDUP_BYTES"),
		&cli.DurationFlag{Name: "outbox-takeover", Value: host.DefaultOutboxTakeover, Usage: "how long a message of the Redis outbox (--store) stays with the replica that read it, unsent, before another replica of the same --id takes it over (0: never)", EnvVars: []string{"CMDHOST_OUTBOX_TAKEOVER"}},
		&cli.StringSliceFlag{Name: "trust", Usage: "Ed25519 public key `FILE` (PEM) whose signatures the host trusts (repeatable): with any, a module is served only when its NAME.wasm.sig is by one of them, at every load and reload (cmdhost plugin sign; docs/fleet.md)", EnvVars: []string{"CMDHOST_TRUST"}},
		&cli.StringSliceFlag{Name: "pull-from", Usage: "OCI `REGISTRY` (HOST[:PORT]) the host may pull a module from itself when an install names it (cmdhost plugin install oci://… --host-pulls), with the --registry-* credentials (repeatable); none: the host pulls nothing", EnvVars: []string{"CMDHOST_PULL_FROM"}},
		&cli.StringFlag{Name: "metrics", Usage: "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9464), and the probes /healthz and /readyz (docs/operations.md); none: off", EnvVars: []string{"CMDHOST_METRICS"}},
		&cli.StringFlag{Name: "otlp-endpoint", Usage: "send OpenTelemetry spans of every request, nested call and call to another host to this OTLP/HTTP collector `URL` (e.g. http://127.0.0.1:4318); none: no tracing", EnvVars: []string{"CMDHOST_OTLP_ENDPOINT"}},
		&cli.BoolFlag{Name: "events", Usage: "publish timeout events as JSON telemetry on cmdhost/{id}/events", EnvVars: []string{"CMDHOST_EVENTS"}},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"CMDHOST_LOG_LEVEL"}},
	}
	// The embedded broker's security (below), the secured broker's
	// (brokerauth.go), the store's and the admin token (servesecrets.go),
	// the caller's identity (serveidentity.go), the registries' (oci.go),
	// the state's (servestate.go).
	for _, more := range [][]cli.Flag{embeddedSecurityFlags(), hostconn.AuthFlags(), secretFlags(), identityFlags(), registry.RegistryFlags(), stateFlags()} {
		flags = append(flags, more...)
	}
	return inCategories(flags, serveCategories, ServeCategoryOrder)
}

// inCategories sets each flag's Category from categories (by its name)
// and sorts flags by order, stably. A flag categories does not name is
// a mistake that panics, so that a new flag cannot land outside the
// help's groups unnoticed (TestServeHelp runs this).
func inCategories(flags []cli.Flag, categories map[string]string, order []string) []cli.Flag {
	for _, f := range flags {
		cat, ok := categories[f.Names()[0]]
		if !ok {
			panic("serve's flag --" + f.Names()[0] + " has no category in serveCategories")
		}
		setCategory(f, cat)
	}
	slices.SortStableFunc(flags, func(a, b cli.Flag) int {
		return slices.Index(order, base.CategoryOf(a)) - slices.Index(order, base.CategoryOf(b))
	})
	return flags
}

// setCategory sets f's Category: every urfave/cli flag type has the
// field and none a setter, so it is set by name.
func setCategory(f cli.Flag, cat string) {
	field := reflect.ValueOf(f).Elem().FieldByName("Category")
	if !field.IsValid() || field.Kind() != reflect.String {
		panic(fmt.Sprintf("setCategory: a flag (%T) without a Category field", f))
	}
	field.SetString(cat)
}
