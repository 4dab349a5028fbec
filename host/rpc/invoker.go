package rpc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/abi"
)

// InvokerConfig configures an Invoker. Broker is required.
type InvokerConfig struct {
	Broker   *url.URL
	ClientID string // default: "cmdhost-invoker-" and random hex
	Dial     func(ctx context.Context, cfg autopaho.ClientConfig, u *url.URL) (net.Conn, error)
	Logger   *slog.Logger
}

// Call is one invocation.
type Call struct {
	Topic       string // the request topic, e.g. rpc/host-1/echo
	Payload     []byte
	ContentType string
	Format      abi.FormatIndicator
	Metadata    map[string]string
	// Timeout is the request's message expiry, rounded up to whole
	// seconds; the call waits at most this long (or ctx's deadline).
	Timeout time.Duration
	// Correlation overrides the random correlation data (tests send
	// duplicates with it).
	Correlation []byte
}

// Result is an executor's response.
type Result struct {
	Status      abi.Status
	Message     string
	AppError    bool
	PropName    string
	PropValue   string
	Payload     []byte
	ContentType string
	Metadata    map[string]string // user properties other than the protocol's
	Expiry      uint32            // the response's message expiry, seconds (0: none)
	Timestamp   string
}

// Err returns the result as an error when its status is not a success.
func (r *Result) Err() error {
	if r.Status == abi.StatusOK || r.Status == abi.StatusNoContent {
		return nil
	}
	return &RemoteError{Result: r}
}

// RemoteError is an error status from the executor.
type RemoteError struct{ Result *Result }

func (e *RemoteError) Error() string {
	r := e.Result
	msg := fmt.Sprintf("status %d", r.Status)
	if r.AppError {
		msg += " (application error)"
	}
	if r.Message != "" {
		msg += ": " + r.Message
	}
	if r.PropName != "" {
		msg += fmt.Sprintf(" [%s=%q]", r.PropName, r.PropValue)
	}
	return msg
}

// ErrNoResponse means no executor answered before the call's timeout.
var ErrNoResponse = errors.New("no response before the timeout")

// Invoker calls commands over MQTT v5 with the RPC protocol. Invoke is
// safe for concurrent use: responses come to one topic of the invoker's
// and are matched by correlation data.
type Invoker struct {
	cfg           InvokerConfig
	cm            *autopaho.ConnectionManager
	responseTopic string
	hlc           *HLC

	mu      sync.Mutex
	waiting map[string]chan *Result // by correlation data
}

// NewInvoker connects to the broker and subscribes to its response topic.
func NewInvoker(ctx context.Context, cfg InvokerConfig) (*Invoker, error) {
	if cfg.Broker == nil {
		return nil, errors.New("broker URL is required")
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "cmdhost-invoker-" + randomHex(6)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	inv := &Invoker{
		cfg: cfg, responseTopic: "clients/" + cfg.ClientID + "/rpc/response",
		hlc:     NewHLC(HLCConfig{NodeID: nodeID(cfg.ClientID)}),
		waiting: make(map[string]chan *Result),
	}
	up := make(chan error, 1)
	acfg := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{cfg.Broker},
		KeepAlive:                     30,
		CleanStartOnInitialConnection: true,
		ReconnectBackoff:              autopaho.NewConstantBackoff(time.Second),
		ConnectTimeout:                5 * time.Second,
		AttemptConnection:             cfg.Dial,
		ConnectPacketBuilder:          requestProblemInfo,
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err := cm.Subscribe(sctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: inv.responseTopic, QoS: 1}}})
				select {
				case up <- err:
				default:
				}
			}()
		},
		OnConnectError: func(err error) { cfg.Logger.Debug("invoker connect", "err", err) },
		ClientConfig: paho.ClientConfig{
			ClientID:          cfg.ClientID,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){inv.receive},
		},
	}
	cm, err := autopaho.NewConnection(context.Background(), acfg)
	if err != nil {
		return nil, err
	}
	inv.cm = cm
	select {
	case err := <-up:
		if err != nil {
			_ = cm.Disconnect(context.Background())
			return nil, fmt.Errorf("subscribing to %s: %w", inv.responseTopic, err)
		}
		return inv, nil
	case <-ctx.Done():
		_ = cm.Disconnect(context.Background())
		return nil, fmt.Errorf("connecting to %s: %w (is a broker running there?)", cfg.Broker, ctx.Err())
	}
}

// Close disconnects.
func (inv *Invoker) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return inv.cm.Disconnect(ctx)
}

// Invoke publishes one request and waits for its response. A response with
// an error status is a Result, not an error: see Result.Err.
func (inv *Invoker) Invoke(ctx context.Context, c Call) (*Result, error) {
	if c.Timeout <= 0 {
		return nil, errors.New("a call needs a positive timeout (its message expiry)")
	}
	corr := c.Correlation
	if corr == nil {
		corr = newUUID()
	}
	ch := make(chan *Result, 1)
	inv.mu.Lock()
	inv.waiting[string(corr)] = ch
	inv.mu.Unlock()
	defer func() {
		inv.mu.Lock()
		delete(inv.waiting, string(corr))
		inv.mu.Unlock()
	}()

	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	expiry := uint32(math.Ceil(c.Timeout.Seconds()))
	ts, _ := inv.hlc.Now()
	props := paho.UserProperties{
		{Key: propProtocol, Value: protocolVersion},
		{Key: propSourceID, Value: inv.cfg.ClientID},
		{Key: propTimestamp, Value: ts.String()},
	}
	for k, v := range c.Metadata {
		props = append(props, paho.UserProperty{Key: k, Value: v})
	}
	pub := &paho.Publish{
		QoS: 1, Topic: c.Topic, Payload: c.Payload,
		Properties: &paho.PublishProperties{
			CorrelationData: corr, ResponseTopic: inv.responseTopic, ContentType: c.ContentType,
			MessageExpiry: &expiry, User: props,
		},
	}
	if c.Format != abi.FormatBytes {
		f := byte(c.Format)
		pub.Properties.PayloadFormat = &f
	}
	if _, err := inv.cm.Publish(ctx, pub); err != nil {
		return nil, fmt.Errorf("publishing the request to %s: %w", c.Topic, err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%v) on %s", ErrNoResponse, c.Timeout, c.Topic)
		}
		return nil, ctx.Err()
	}
}

func (inv *Invoker) receive(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	if p.Properties == nil {
		return true, nil
	}
	inv.mu.Lock()
	ch, ok := inv.waiting[string(p.Properties.CorrelationData)]
	inv.mu.Unlock()
	if !ok {
		return true, nil // late, duplicate or not ours
	}
	r := parseResult(p)
	select {
	case ch <- r: // the first response wins; duplicates are dropped
	default:
	}
	return true, nil
}

func parseResult(p *paho.Publish) *Result {
	r := &Result{Payload: p.Payload, ContentType: p.Properties.ContentType}
	if p.Properties.MessageExpiry != nil {
		r.Expiry = *p.Properties.MessageExpiry
	}
	for _, up := range p.Properties.User {
		switch up.Key {
		case propStatus:
			n, _ := strconv.Atoi(up.Value)
			r.Status = abi.Status(n)
		case propStatusMessage:
			r.Message = up.Value
		case propAppError:
			r.AppError = up.Value == "true"
		case propName:
			r.PropName = up.Value
		case propValue:
			r.PropValue = up.Value
		case propTimestamp:
			r.Timestamp = up.Value
		default:
			if !strings.HasPrefix(up.Key, "__") {
				if r.Metadata == nil {
					r.Metadata = make(map[string]string)
				}
				r.Metadata[up.Key] = up.Value
			}
		}
	}
	return r
}

// newUUID returns 16 random bytes shaped as a version 4 UUID.
func newUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
