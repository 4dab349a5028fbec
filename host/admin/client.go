package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/plugins"
)

// BrokerAuth is how a client logs in to a secured broker and checks its
// certificate: a CA file, a client certificate and key (mTLS), a server
// name, a user name, and the password's file or environment variable
// (never the password itself: it is read at each connection, as the
// certificate files are, so rotated files are used without a restart).
// The zero BrokerAuth is anonymous. TLS needs a tls, mqtts or ssl broker
// URL; a URL may name the user (mqtts://NAME@host:8883), never a
// password. Its fields are those of the host's session (internal/session
// Auth).
type BrokerAuth = session.Auth

// ClientConfig configures a Client. Broker and ExecutorID are required.
type ClientConfig struct {
	// Broker is the MQTT broker the host serves on.
	Broker *url.URL
	// Failover are more brokers of the same cluster, tried in turn after
	// Broker when it cannot be reached (session.Config.Failover).
	Failover []*url.URL
	// Auth is how the client logs in to Broker (BrokerAuth); zero:
	// anonymously.
	Auth BrokerAuth
	// ExecutorID is the host's executor id (serve --id).
	ExecutorID string
	// Token is the host's admin token (the content of serve
	// --admin-token-file), sent with every op when set: reload and remove
	// need it. Read it from where it is kept (a file, a secret store) just
	// before Dial; it is sent as a user property, so the broker
	// connection should be TLS when it crosses a network.
	Token string
	// Timeout is each op's message expiry and how long it waits for the
	// reply (WithTimeout changes it); default DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is an op's timeout when ClientConfig.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// Errors of an op that got no reply. ErrNoExecutor: no host with the
// executor id acknowledged the op on that broker within the ack window
// (1.5 s), whatever the timeout. ErrNoResponse: no reply within the
// timeout; with ErrAcked too, the host acknowledged the op, so it runs
// longer than that.
var (
	ErrNoExecutor = rpc.ErrNoExecutor
	ErrNoResponse = rpc.ErrNoResponse
	ErrAcked      = rpc.ErrAcked
)

// HostError is an op the host answered with an error status: the token
// missing or wrong (StatusForbidden), no such plugin (400), a failure.
type HostError struct {
	Status  abi.Status
	Message string
	err     error // the reply as an error, for its text
}

func (e *HostError) Error() string { return e.err.Error() }

// Client runs the admin ops of one host. It is safe for concurrent use;
// Close it.
type Client struct {
	cfg     ClientConfig
	inv     *rpc.Invoker
	replica string // the client id of the replica asked on its own topics; "": any
}

// Dial connects to cfg.Broker for the admin ops of the host cfg.ExecutorID
// names. It does not wait for a broker that refuses the connection (it
// returns that error at once), and otherwise tries until ctx ends.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if cfg.Broker == nil {
		return nil, errors.New("admin client: the broker URL is required")
	}
	if err := topic.CheckLevel(cfg.ExecutorID); err != nil {
		// It is a level of the ops' topics.
		return nil, fmt.Errorf("admin client: executor id %q: %w", cfg.ExecutorID, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	inv, err := rpc.NewInvoker(ctx, rpc.InvokerConfig{Session: session.Config{Broker: cfg.Broker, Failover: cfg.Failover, Auth: cfg.Auth}, RefusedIsFinal: true})
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, inv: inv}, nil
}

// Close disconnects the client, and every client WithTimeout made of it.
func (c *Client) Close() error { return c.inv.Close() }

// ExecutorID is the executor id of the host the client asks.
func (c *Client) ExecutorID() string { return c.cfg.ExecutorID }

// WithTimeout returns a client that asks the same host over the same
// connection with the op timeout d.
func (c *Client) WithTimeout(d time.Duration) *Client {
	cfg := c.cfg
	if d > 0 {
		cfg.Timeout = d
	}
	return &Client{cfg: cfg, inv: c.inv, replica: c.replica}
}

// ForReplica returns a client that asks, over the same connection, the
// replica whose MQTT client id is clientID, on its own topics
// (ReplicaTopic), instead of whichever replica of the group the broker
// hands the op to.
func (c *Client) ForReplica(clientID string) (*Client, error) {
	if err := topic.CheckLevel(clientID); err != nil {
		return nil, fmt.Errorf("admin client: replica %q: %w", clientID, err)
	}
	return &Client{cfg: c.cfg, inv: c.inv, replica: clientID}, nil
}

// Replica is the client id of the replica a ForReplica client asks; ""
// for a client that asks whichever answers.
func (c *Client) Replica() string { return c.replica }

// Replicas hands each announcement of a replica of the host's share
// group (see ReplicasTopic) to each until ctx ends; a replica announces
// itself every AnnounceInterval, so listening for DiscoveryWindow hears
// every live one. each runs on the connection's goroutine and must not
// block. A lone host announces itself there too (Share ""): callers keep
// the replicas of the group they look for.
// The bounds of an announcement Replicas passes on: MQTT client ids
// are at most 65,535 bytes, but a replica's is a topic level the host
// subscribes with, and a share group a name; neither needs more.
const (
	maxAnnouncement = 1024
	maxAnnouncedID  = 256
)

func (c *Client) Replicas(ctx context.Context, each func(ReplicaID)) error {
	return c.inv.ReceiveTelemetry(ctx, ReplicasTopic(c.cfg.ExecutorID), func(payload []byte) {
		var id ReplicaID
		// Anyone on the broker may publish there: what is not an
		// announcement, or is larger than one, is dropped.
		if len(payload) <= maxAnnouncement &&
			json.Unmarshal(payload, &id) == nil && len(id.ClientID) <= maxAnnouncedID && len(id.Share) <= maxAnnouncedID &&
			topic.CheckLevel(id.ClientID) == nil {
			each(id)
		}
	})
}

// HostID names a host that announced itself on a broker: its executor
// id, and its MQTT client id and share group.
type HostID struct {
	Executor string `json:"executor"`
	ReplicaID
}

// Hosts hands each announcement of a host on the broker, whatever its
// executor id (every host announces itself every AnnounceInterval on its
// ReplicasTopic), to each until ctx ends: listening for DiscoveryWindow
// hears every live one. each runs on the connection's goroutine and must
// not block. Ask one with ForExecutor (and ForReplica).
func (c *Client) Hosts(ctx context.Context, each func(HostID)) error {
	return c.inv.ReceiveTelemetryFilter(ctx, ReplicasTopic("+"), func(t string, payload []byte) {
		executor := strings.TrimSuffix(strings.TrimPrefix(t, plugins.HostTopicPrefix+"/"), "/replicas")
		var id ReplicaID
		if len(payload) <= maxAnnouncement && topic.CheckLevel(executor) == nil &&
			json.Unmarshal(payload, &id) == nil && len(id.ClientID) <= maxAnnouncedID && len(id.Share) <= maxAnnouncedID {
			each(HostID{Executor: executor, ReplicaID: id})
		}
	})
}

// ForExecutor returns a client that asks, over the same connection, the
// host whose executor id is id.
func (c *Client) ForExecutor(id string) (*Client, error) {
	if err := topic.CheckLevel(id); err != nil {
		return nil, fmt.Errorf("admin client: executor id %q: %w", id, err)
	}
	cfg := c.cfg
	cfg.ExecutorID = id
	return &Client{cfg: cfg, inv: c.inv}, nil
}

// Topic is the request topic of op for this client: the op's (Topic),
// or its replica's (ReplicaTopic) for a ForReplica client.
func (c *Client) Topic(op string) string {
	if c.replica != "" {
		return ReplicaTopic(c.cfg.ExecutorID, c.replica, op)
	}
	return Topic(c.cfg.ExecutorID, op)
}

// Call runs the admin op named, with req as its JSON payload (none when
// nil), and returns the reply's JSON as the host sent it. An op answered
// with an error status is a *HostError; one that got no reply is
// ErrNoExecutor or ErrNoResponse.
func (c *Client) Call(ctx context.Context, op string, req any) (json.RawMessage, error) {
	var payload []byte
	if req != nil {
		var err error
		if payload, err = json.Marshal(req); err != nil {
			return nil, err
		}
	}
	return c.call(ctx, op, payload, "application/json", nil)
}

// call runs the admin op named with payload, of contentType, and the
// user properties md besides the token's.
func (c *Client) call(ctx context.Context, op string, payload []byte, contentType string, md map[string]string) (json.RawMessage, error) {
	call := rpc.Call{Topic: c.Topic(op), ContentType: contentType, Payload: payload, Timeout: c.cfg.Timeout, Ack: true, Metadata: md}
	// The token goes with the ops that need it only: list, inspect,
	// stats and state-namespaces are open, and go to hosts found from announcements, which any
	// client that may publish them can fake to collect what it is sent.
	if c.cfg.Token != "" && op != OpList && op != OpInspect && op != OpStats && op != OpStateNamespaces {
		if call.Metadata == nil {
			call.Metadata = map[string]string{}
		}
		call.Metadata[TokenKey] = c.cfg.Token
	}
	res, err := c.inv.Invoke(ctx, call)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, &HostError{Status: res.Status, Message: res.Message, err: err}
	}
	return res.Payload, nil
}

// List returns every plugin of the host.
func (c *Client) List(ctx context.Context) ([]PluginView, error) {
	var views []PluginView
	if err := c.decode(ctx, OpList, nil, &views, "the host's plugin list"); err != nil {
		return nil, err
	}
	return views, nil
}

// Inspect returns the plugin named, with its commands' settings.
func (c *Client) Inspect(ctx context.Context, name string) (PluginView, error) {
	var v PluginView
	err := c.decode(ctx, OpInspect, Request{Name: name}, &v, "the host's view of plugin "+name)
	return v, err
}

// Stats returns the host's plugins, reuse cache counters and version.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.decode(ctx, OpStats, nil, &st, "the host's stats")
	return st, err
}

// Reload reloads the plugin named from its file and returns its view;
// it needs the token.
func (c *Client) Reload(ctx context.Context, name string) (PluginView, error) {
	var v PluginView
	err := c.decode(ctx, OpReload, Request{Name: name}, &v, "the host's view of plugin "+name)
	return v, err
}

// Remove stops serving the plugin named and deletes its file; a plugin
// that failed (a refused install, a file that does not load) is cleared
// from the host's list. It needs the token.
func (c *Client) Remove(ctx context.Context, name string) error {
	_, err := c.Call(ctx, OpRemove, Request{Name: name})
	return err
}

// Rollback serves again the version of the plugin named that its last
// install replaced, and returns the host's verdict (refused: Served false,
// with the reason); it needs the token.
func (c *Client) Rollback(ctx context.Context, name string) (Verdict, error) {
	var v Verdict
	err := c.decode(ctx, OpRollback, Request{Name: name}, &v, "the host's verdict on rolling back "+name)
	return v, err
}

// Reject is Rollback for a version found bad (a rollout's automatic
// rollback): the host also forgets the version it replaces, and keeps
// the one kept before it for the next rollback, so that no later
// rollback serves the rejected version. A host that predates it rolls
// back as Rollback does: the Verdict's Previous is then the rejected
// version's digest.
func (c *Client) Reject(ctx context.Context, name string) (Verdict, error) {
	var v Verdict
	err := c.decode(ctx, OpRollback, Request{Name: name, Reject: true}, &v, "the host's verdict on rolling back "+name)
	return v, err
}

// Events hands the payload of each timeout event the host publishes
// (serve --events; JSON, see EventsTopic) to each until ctx ends. each
// runs on the connection's goroutine and must not block. A host without
// --events publishes none, which is no error.
func (c *Client) Events(ctx context.Context, each func(payload []byte)) error {
	return c.inv.ReceiveTelemetry(ctx, EventsTopic(c.cfg.ExecutorID), each)
}

// decode runs op and unmarshals its reply into v; what names the reply
// in the error of one that is not JSON of v's type.
func (c *Client) decode(ctx context.Context, op string, req, v any, what string) error {
	out, err := c.Call(ctx, op, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
