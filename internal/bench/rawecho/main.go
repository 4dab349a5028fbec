// Command rawecho is the baseline of make bench-e2e: the barest executor
// paho.golang allows, what the broker moves for an executor that does
// nothing. It answers every request on its topic with its payload, at
// QoS 1, to its response topic with its correlation data and __stat 200:
// no header checks, no dedup, no handler, acks by paho. With --embedded
// it first starts cmdhost's embedded broker (the same library and
// settings as serve's) in its own process, and connects to it over TCP
// (serve reaches its own broker in process, through a memory pipe).
//
// make bench-e2e builds it twice: against paho.golang as released (the
// baseline), and against cmdhost's copy of it (third_party/paho.golang,
// whose packet codec allocates less), to show what that copy gives a
// bare executor.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker"
)

func main() {
	brokerURL := flag.String("broker", "", "the broker, mqtt://HOST:PORT")
	embedded := flag.String("embedded", "", "start the embedded broker on this address and use it")
	topic := flag.String("topic", "rpc/raw/echo", "the request topic")
	id := flag.String("id", "rawecho", "the MQTT client id")
	flag.Parse()
	if err := run(*brokerURL, *embedded, *topic, *id); err != nil {
		log.Fatalf("rawecho: %v", err)
	}
}

func run(brokerURL, embedded, topic, id string) error {
	if embedded != "" {
		b, err := broker.Start(broker.Config{Addr: embedded})
		if err != nil {
			return err
		}
		defer b.Close()
		brokerURL = b.URL().String()
	}
	u, err := url.Parse(brokerURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--broker %q: want mqtt://HOST:PORT", brokerURL)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return err
	}
	var c *paho.Client
	c = paho.NewClient(paho.ClientConfig{Conn: conn, ClientID: "rawecho",
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			p := pr.Packet
			if p.Properties == nil || p.Properties.ResponseTopic == "" {
				return true, nil
			}
			reply := &paho.Publish{Topic: p.Properties.ResponseTopic, QoS: 1, Payload: p.Payload,
				Properties: &paho.PublishProperties{CorrelationData: p.Properties.CorrelationData,
					ContentType: p.Properties.ContentType, User: paho.UserProperties{{Key: "__stat", Value: "200"}}}}
			_, err := c.PublishWithOptions(context.Background(), reply, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
			return true, err
		}}})
	ctx := context.Background()
	if _, err := c.Connect(ctx, &paho.Connect{KeepAlive: 30, CleanStart: true, ClientID: id,
		Properties: &paho.ConnectProperties{RequestProblemInfo: true}}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 1}}}); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	fmt.Fprintln(os.Stderr, "msg=serving") // the bench waits for this line
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
	case <-c.Done():
		return fmt.Errorf("the broker closed the connection")
	}
	return c.Disconnect(&paho.Disconnect{})
}
