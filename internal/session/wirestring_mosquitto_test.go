package session

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
)

// mosquitto's verdict on every kind of character agrees with wireRune and
// WireProblem: what they pass, mosquitto accepts in a user property, a
// content type and a topic; what they refuse, mosquitto drops the client
// for. Each probe gets a connection of its own (a refusal ends it).
func TestMosquittoRefusesWhatWireRefuses(t *testing.T) {
	u := brokertest.StartMosquitto(t)
	var probes []string
	add := func(from, to rune) {
		for r := from; r <= to; r++ {
			probes = append(probes, "a"+string(r)+"b")
		}
	}
	add(0, 0xa0)        // C0, ASCII, DEL, C1, NBSP
	add(0xfdcf, 0xfdf0) // the non-character block and its neighbours
	add(0xfffc, 0xffff) // the end of the BMP
	for p := rune(1); p <= 0x10; p++ {
		add(p<<16|0xfffd, p<<16|0xffff) // the end of every plane
	}
	for _, r := range []rune{0xad, 0x200b, 0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0x10000, 0xe0001} {
		probes = append(probes, string(r))
	}
	probes = append(probes, "\xff", "a\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80") // not UTF-8

	where := map[string]func(s string) *paho.Publish{
		"user property value": func(s string) *paho.Publish {
			return &paho.Publish{QoS: 1, Topic: "t", Properties: &paho.PublishProperties{User: paho.UserProperties{{Key: "k", Value: s}}}}
		},
		"content type": func(s string) *paho.Publish {
			return &paho.Publish{QoS: 1, Topic: "t", Properties: &paho.PublishProperties{ContentType: s}}
		},
		"topic": func(s string) *paho.Publish {
			return &paho.Publish{QoS: 1, Topic: "t/" + s, Properties: &paho.PublishProperties{}}
		},
	}
	for name, build := range where {
		for _, s := range probes {
			if name == "topic" && strings.ContainsAny(s, "+#") {
				continue // wildcards: a rule of topic names (validTopicName), not of strings
			}
			accepted, err := mosquittoAccepts(u.Host, build(s))
			if err != nil {
				t.Fatal(err)
			}
			if want := WireProblem(s) == ""; accepted != want {
				t.Errorf("%s %+q: mosquitto accepts: %t; WireProblem: %q", name, s, accepted, WireProblem(s))
			}
		}
	}
	// A payload marked UTF-8 is not checked by mosquitto: the host checks
	// the ones it receives (400) and sends (see reply.forWire).
	one := byte(1)
	if ok, err := mosquittoAccepts(u.Host, &paho.Publish{QoS: 1, Topic: "t", Payload: []byte("\xff"),
		Properties: &paho.PublishProperties{PayloadFormat: &one}}); err != nil || !ok {
		t.Errorf("mosquitto refused a payload marked UTF-8 that is not (%v): the comment above is wrong", err)
	}
}

// mosquittoAccepts publishes p on a new connection to addr and reports
// whether the broker acknowledged it (false: it dropped the connection).
func mosquittoAccepts(addr string, p *paho.Publish) (bool, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return false, err
	}
	lost := make(chan struct{})
	var once sync.Once
	drop := func() { once.Do(func() { close(lost) }) }
	c := paho.NewClient(paho.ClientConfig{Conn: conn,
		OnClientError:      func(error) { drop() },
		OnServerDisconnect: func(*paho.Disconnect) { drop() },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: "wire-probe", CleanStart: true, KeepAlive: 30}); err != nil {
		return false, fmt.Errorf("connecting: %w", err)
	}
	defer func() { _ = c.Disconnect(&paho.Disconnect{}) }()
	acked := make(chan error, 1)
	go func() {
		_, err := c.Publish(ctx, p)
		acked <- err
	}()
	select {
	case err := <-acked:
		if ctx.Err() != nil {
			return false, fmt.Errorf("no verdict within 5 s on %+q", p.Topic)
		}
		return err == nil, nil
	case <-lost:
		return false, nil
	}
}
