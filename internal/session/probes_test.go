package session

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/jwt"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// Probes of the client side written independently of the other tests
// (issue 24).

// The client reads a token as large as the broker accepts
// (jwt.MaxTokenBytes, 8 KiB), and refuses a larger one itself, naming the
// bound: a token the broker would take is never refused by the client
// (it read at most 4 KiB, the bound of a password file).
func TestProbeTokenSizeAgreesWithBroker(t *testing.T) {
	iss := testkit.NewIssuer(t)
	e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0", SATKeyFile: iss.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	tokenFile := filepath.Join(t.TempDir(), "token")
	tok := iss.Token(t, "system:serviceaccount:ns:big", broker.DefaultSATAudience, time.Now().Add(time.Hour),
		map[string]any{"pad": strings.Repeat("x", 4500)})
	if len(tok) <= 6<<10 || len(tok) > jwt.MaxTokenBytes {
		t.Fatalf("the test's token is %d bytes: want over 6 KiB, at most %d", len(tok), jwt.MaxTokenBytes)
	}
	testkit.WriteToken(t, tokenFile, tok)
	up := make(chan struct{}, 4)
	s, err := New(Config{Broker: e.URL(), Auth: Auth{TokenFile: tokenFile}, ClientID: "big-token", Expiry: -1,
		ReconnectDelay: 20 * time.Millisecond, ReplyAckTimeout: -1}, Handlers{Up: func(bool) { up <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Disconnect(context.Background()) })
	select {
	case <-up:
	case <-time.After(testkit.Patience()):
		t.Fatalf("a token of %d bytes (the broker takes %d) did not log in", len(tok), jwt.MaxTokenBytes)
	}

	testkit.WriteToken(t, tokenFile, strings.Repeat("x", jwt.MaxTokenBytes+1))
	_, err = Auth{TokenFile: tokenFile}.token()
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(jwt.MaxTokenBytes)) || strings.Contains(err.Error(), "xxxx") {
		t.Errorf("a token over the broker's bound: %v; want an error naming %d, not the token", err, jwt.MaxTokenBytes)
	}
}
