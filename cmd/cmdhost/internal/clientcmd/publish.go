package clientcmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"
	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/hlc"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// cmdhost publish: invoke's sibling for triggers. It sends one telemetry
// message as the Azure IoT Operations telemetry sender does (QoS 1,
// __protVer, __srcId, __ts; optionally a CloudEvent) and returns once the
// broker acknowledged it.

func PublishCommand() *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "send a telemetry message (what a host's triggers receive) over MQTT",
		ArgsUsage: "TOPIC",
		Description: "Publishes one message on TOPIC at QoS 1 with the Azure IoT Operations telemetry\n" +
			"headers (__protVer 1.0, __srcId the client id, __ts a hybrid clock reading) and waits\n" +
			"for the broker's acknowledgement. --event-type makes it a CloudEvent (specversion,\n" +
			"type, source, id, time). Exit statuses: 0 acknowledged; 2 a bad command line; 3 no\n" +
			"broker at --broker; 6 no acknowledgement before --timeout; 7 the broker refused\n" +
			"the credentials or the topic (not authorized); 130 interrupted.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "data", Aliases: []string{"d"}, Usage: "message payload"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the payload from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "content-type", Usage: "the message's content type (text/* and JSON payloads are marked UTF-8)"},
			&cli.StringSliceFlag{Name: "meta", Usage: "user property `key=value` (repeatable)"},
			&cli.StringFlag{Name: "event-type", Usage: "send a CloudEvent of this `TYPE`"},
			&cli.StringFlag{Name: "event-source", Usage: "the CloudEvent's `SOURCE` (default /cmdhost/publish/CLIENTID)"},
			&cli.StringFlag{Name: "event-id", Usage: "the CloudEvent's `ID` (default a random one): a trigger handles a message of one source and id once"},
			&cli.DurationFlag{Name: "expiry", Usage: "the message's expiry (0: none)"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the connection and the broker's acknowledgement"},
			&cli.StringFlag{Name: "client-id", Usage: "MQTT client `ID`, also the message's __srcId (default cmdhost-publish- and a random suffix)"},
			hostconn.BrokersFlag("MQTT broker `URL`", "mqtt://"+hostconn.DefaultListen),
			&cli.BoolFlag{Name: "json", Usage: "print what was sent as one JSON object: topic, bytes, source id, timestamp, event id"},
		}, hostconn.AuthFlags()...),
		Action: runPublish,
	}
}

// Published is what publish --json prints.
type Published struct {
	Topic     string `json:"topic"`
	Bytes     int    `json:"bytes"`
	SourceID  string `json:"sourceId"`
	Timestamp string `json:"timestamp"`
	EventID   string `json:"eventId,omitempty"`
	TookMs    int64  `json:"tookMs"`
}

func runPublish(c *cli.Context) error {
	p, err := publishPacket(c)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	us, err := hostconn.BrokerURLs(c)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	auth, err := hostconn.BrokersAuth(c, us)
	if err != nil {
		return err
	}
	clientID := p.Properties.User.Get(srcIDProperty)
	refused := make(chan error, 1)
	sess, err := session.New(session.Config{Broker: us[0], Failover: us[1:], Auth: auth, ClientID: clientID, CleanStart: true, Expiry: -1},
		session.Handlers{ConnectError: func(err error) {
			select {
			case refused <- err:
			default:
			}
		}})
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.Duration("timeout"))
	defer cancel()
	start := time.Now()
	if err := sess.Connect(); err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sess.Disconnect(dctx)
	}()
	up := make(chan error, 1)
	go func() { up <- sess.AwaitConnection(ctx) }()
	select {
	case err := <-refused:
		return hostconn.ConnectError(err)
	case err := <-up:
		if err != nil {
			return publishTimedOut(c, ctx, "no connection to "+redact.URL(us[0]))
		}
	}
	if err := sess.Check(p); err != nil {
		return cli.Exit(fmt.Sprintf("the broker would refuse the message: %v", err), base.ExitUsage)
	}
	err = sess.Publish(ctx, p)
	var refusedPub *session.PublishRefusedError
	switch {
	case errors.As(err, &refusedPub):
		return cli.Exit(err, hostconn.ExitRefused)
	case err != nil && ctx.Err() != nil:
		return publishTimedOut(c, ctx, "no acknowledgement from the broker")
	case err != nil:
		return err
	}
	if c.Bool("json") {
		return base.WriteJSONLine(c.App.Writer, Published{Topic: p.Topic, Bytes: len(p.Payload), SourceID: clientID,
			Timestamp: p.Properties.User.Get(tsProperty), EventID: p.Properties.User.Get("id"), TookMs: time.Since(start).Milliseconds()})
	}
	return nil
}

// publishTimedOut is the exit of a publish that ran out of time (or was
// interrupted).
func publishTimedOut(c *cli.Context, ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return cli.Exit("interrupted", base.ExitInterrupted)
	}
	return cli.Exit(fmt.Sprintf("%s within --timeout %v", what, c.Duration("timeout")), base.ExitTimeout)
}

// The protocol's properties publish sets.
const (
	protVerProperty = "__protVer"
	srcIDProperty   = "__srcId"
	tsProperty      = "__ts"
)

// cloudEventAttributes are the attributes --event-type sets, which --meta
// may not.
var cloudEventAttributes = []string{"specversion", "type", "source", "id", "time", "subject", "dataschema", "datacontenttype"}

// publishPacket makes the message of c's arguments and flags, or says
// which one is wrong.
func publishPacket(c *cli.Context) (*paho.Publish, error) {
	switch {
	case c.NArg() == 0:
		return nil, errors.New("publish needs a topic: cmdhost publish TOPIC [-d PAYLOAD]")
	case c.NArg() > 1:
		return nil, fmt.Errorf("publish takes one topic, got %d arguments: cmdhost publish TOPIC [-d PAYLOAD] (quote a payload with spaces)", c.NArg())
	}
	t := c.Args().First()
	if !topic.ValidName(t) {
		return nil, fmt.Errorf("topic %q: not a topic name: no wildcards (+, #), no empty level, no leading or trailing '/'", t)
	}
	if first, _, _ := strings.Cut(t, "/"); topic.IsReserved(first) {
		return nil, fmt.Errorf("topic %q: topics under %s/ are the hosts' own (requests, admin ops, replies, the state store) or the broker's: publish telemetry elsewhere, call a command with cmdhost invoke", t, first)
	}
	body, err := payload(c)
	if err != nil {
		return nil, err
	}
	meta, err := keyValues("meta", c.StringSlice("meta"))
	if err != nil {
		return nil, err
	}
	event := c.String("event-type")
	if event == "" && (c.IsSet("event-source") || c.IsSet("event-id")) {
		return nil, errors.New("--event-source and --event-id describe a CloudEvent: give its type with --event-type")
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		switch {
		case strings.HasPrefix(k, "__"):
			return nil, fmt.Errorf("--meta %s: properties starting with __ are the protocol's", k)
		case event != "" && slices.Contains(cloudEventAttributes, k):
			return nil, fmt.Errorf("--meta %s: a CloudEvent attribute; --event-type, --event-source and --event-id set them", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if c.Duration("timeout") <= 0 {
		return nil, errors.New("--timeout must be positive, e.g. --timeout 5s")
	}
	if c.Duration("expiry") < 0 {
		return nil, errors.New("--expiry must not be negative")
	}
	clientID := c.String("client-id")
	if clientID == "" {
		clientID = "cmdhost-publish-" + randomHex(6)
	}
	if strings.Contains(clientID, ":") || !utf8.ValidString(clientID) {
		return nil, fmt.Errorf("--client-id %q: an id without ':' (it is the __ts clock's node id)", clientID)
	}
	ts, err := hlc.New(hlc.Config{NodeID: clientID}).Now()
	if err != nil {
		return nil, err
	}
	props := &paho.PublishProperties{ContentType: c.String("content-type"), User: paho.UserProperties{
		{Key: protVerProperty, Value: "1.0"}, {Key: srcIDProperty, Value: clientID}, {Key: tsProperty, Value: ts.String()}}}
	for _, k := range keys {
		props.User = append(props.User, paho.UserProperty{Key: k, Value: meta[k]})
	}
	if event != "" {
		source := c.String("event-source")
		if source == "" {
			source = "/cmdhost/publish/" + clientID
		}
		id := c.String("event-id")
		if id == "" {
			id = randomHex(16)
		}
		props.User = append(props.User, paho.UserProperty{Key: "specversion", Value: "1.0"}, paho.UserProperty{Key: "type", Value: event},
			paho.UserProperty{Key: "source", Value: source}, paho.UserProperty{Key: "id", Value: id},
			paho.UserProperty{Key: "time", Value: time.Now().UTC().Format(time.RFC3339Nano)})
		if ct := props.ContentType; ct != "" {
			props.User = append(props.User, paho.UserProperty{Key: "datacontenttype", Value: ct})
		}
	}
	if ct := props.ContentType; (strings.HasPrefix(ct, "text/") || strings.HasSuffix(ct, "json")) && utf8.Valid(body) {
		one := byte(1)
		props.PayloadFormat = &one
	}
	if e := c.Duration("expiry"); e > 0 {
		s := uint32(min((e+time.Second-1)/time.Second, 1<<32-1))
		props.MessageExpiry = &s
	}
	return &paho.Publish{QoS: 1, Topic: t, Payload: body, Properties: props}, nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
