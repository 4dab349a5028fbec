// Command aiosender sends telemetry with the Azure IoT Operations Go SDK's
// telemetry sender (github.com/Azure/iot-operations-sdks/go/protocol, on
// the SDK's own MQTT session client, go/mqtt), as a device or a service
// written with that SDK would: cmd/cmdhost/internal/servecmd's TestTriggerAIOSender builds it
// and checks that what it sends reaches a trigger's handler.
//
// It is a module of its own, built by the test with go build, so that the
// host's module neither depends on the SDK (some fifteen modules, none
// the host needs) nor builds the SDK's session client against the host's
// patched copy of paho (the root go.mod replaces paho.golang with
// third_party/paho.golang): the SDK runs with the paho it was released
// with, as it does for its users.
//
//	aiosender -broker 127.0.0.1:1883 -client-id sensor-1 -device d1 -n 3
//
// sends n messages to sensors/{device}/temp (payload "PAYLOAD-i", text/plain,
// the metadata -meta k=v, a CloudEvent with the id EVENT-i and the source
// -source when -event is set) and prints "sent N".
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/iot-operations-sdks/go/mqtt"
	"github.com/Azure/iot-operations-sdks/go/protocol"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "aiosender:", err)
		os.Exit(1)
	}
}

func run() error {
	broker := flag.String("broker", "", "the broker, HOST:PORT (plain TCP)")
	clientID := flag.String("client-id", "aiosender", "the MQTT client id (the messages' __srcId)")
	username := flag.String("username", "", "MQTT user name")
	passwordFile := flag.String("password-file", "", "a file holding the MQTT password")
	pattern := flag.String("topic", "sensors/{device}/temp", "the sender's topic pattern")
	device := flag.String("device", "d1", "the {device} token")
	n := flag.Int("n", 1, "messages to send")
	payload := flag.String("payload", "reading", "payload prefix: message i is PAYLOAD-i")
	meta := flag.String("meta", "", "metadata, k=v (user properties)")
	event := flag.String("event", "", "CloudEvent id prefix: message i has the id EVENT-i; none when empty")
	source := flag.String("source", "urn:aiosender", "the CloudEvent source")
	flag.Parse()

	host, portText, err := net.SplitHostPort(*broker)
	if err != nil {
		return fmt.Errorf("-broker %q: want HOST:PORT: %w", *broker, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return fmt.Errorf("-broker %q: port: %w", *broker, err)
	}
	// Not the Azure IoT Operations broker: its features (connect user
	// properties it alone reads) off.
	opts := []mqtt.SessionClientOption{mqtt.WithDisableAIOBrokerFeatures(true), mqtt.WithCleanStart(true)}
	if *username != "" {
		opts = append(opts, mqtt.WithUsername(mqtt.ConstantUsername(*username)))
	}
	if *passwordFile != "" {
		// Read here, its line end trimmed (the SDK's FilePassword sends
		// the file as it is, newline and all).
		pw, err := os.ReadFile(*passwordFile)
		if err != nil {
			return err
		}
		opts = append(opts, mqtt.WithPassword(mqtt.ConstantPassword([]byte(strings.TrimRight(string(pw), "\r\n")))))
	}
	client, err := mqtt.NewSessionClient(*clientID, mqtt.TCPConnection(host, uint16(port)), opts...)
	if err != nil {
		return err
	}
	app, err := protocol.NewApplication()
	if err != nil {
		return err
	}
	sender, err := protocol.NewTelemetrySender(app, client, protocol.Custom{}, *pattern,
		protocol.WithTopicTokens{"device": *device})
	if err != nil {
		return err
	}
	// A fatal error (the broker refused the connection) stops the session
	// client: its reason is the error, not "shut down".
	fatal := make(chan error, 1)
	client.RegisterFatalErrorHandler(func(err error) { fatal <- err })
	connected := make(chan struct{}, 1)
	client.RegisterConnectEventHandler(func(*mqtt.ConnectEvent) {
		select {
		case connected <- struct{}{}:
		default:
		}
	})
	if err := client.Start(); err != nil {
		return err
	}
	defer func() { _ = client.Stop() }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case <-connected:
	case err := <-fatal:
		return fmt.Errorf("connecting to %s: %w", *broker, err)
	case <-ctx.Done():
		return fmt.Errorf("connecting to %s: %w", *broker, ctx.Err())
	}
	var metadata protocol.WithMetadata
	if k, v, ok := strings.Cut(*meta, "="); ok {
		metadata = protocol.WithMetadata{k: v}
	}
	src, err := url.Parse(*source)
	if err != nil {
		return fmt.Errorf("-source: %w", err)
	}
	for i := range *n {
		data := protocol.Data{Payload: []byte(*payload + "-" + strconv.Itoa(i)), ContentType: "text/plain", PayloadFormat: 1}
		send := []protocol.SendOption{protocol.WithTimeout(30 * time.Second)}
		if metadata != nil {
			send = append(send, metadata)
		}
		if *event != "" {
			send = append(send, protocol.WithCloudEvent(&protocol.CloudEvent{ID: *event + "-" + strconv.Itoa(i), Source: src, Type: "reading"}))
		}
		if err := sender.Send(ctx, data, send...); err != nil {
			select {
			case ferr := <-fatal:
				err = fmt.Errorf("%w (the session client stopped: %w)", err, ferr)
			default:
			}
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	fmt.Printf("sent %d\n", *n)
	return nil
}
