package session

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// K8S-SAT against the embedded broker checking tokens: the session logs
// in with the token file's token; a new token in the file is sent on the
// live connection and accepted (no new connection); an expired one is
// refused and the broker disconnects the session, which then cannot log
// in again with it.
func TestSATReauthentication(t *testing.T) {
	iss := testkit.NewIssuer(t)
	e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0", SATKeyFile: iss.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	const sub = "system:serviceaccount:ns:app"
	tokenFile := filepath.Join(t.TempDir(), "token")
	now := time.Now()
	testkit.WriteToken(t, tokenFile, iss.Token(t, sub, broker.DefaultSATAudience, now.Add(time.Hour), nil))
	var log testkit.LogBuffer
	up := make(chan struct{}, 4)
	s, err := New(Config{Broker: e.URL(), Auth: Auth{TokenFile: tokenFile}, ClientID: "sat-app", Expiry: -1,
		ReconnectDelay: 20 * time.Millisecond, ReplyAckTimeout: -1, Logger: slog.New(slog.NewTextHandler(&log, nil))},
		Handlers{Up: func(bool) { up <- struct{}{} }})
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
		t.Fatal("not connected with the token")
	}

	testkit.WriteToken(t, tokenFile, iss.Token(t, sub, broker.DefaultSATAudience, now.Add(2*time.Hour), nil))
	testkit.WaitFor(t, "the new token accepted on the live connection", func() bool { return s.Stats().Reauthentications == 1 })
	if st := e.SATStats(); st.Logins != 1 || st.Reauthentications != 1 {
		t.Fatalf("broker: %+v; want one login and one re-authentication", st)
	}
	// The same token again (a folder event of another file): not sent.
	testkit.WriteToken(t, filepath.Join(filepath.Dir(tokenFile), "other"), "x")
	testkit.WriteToken(t, tokenFile, iss.Token(t, sub, broker.DefaultSATAudience, now.Add(-time.Second), nil))
	testkit.WaitFor(t, "the expired token refused", func() bool { return s.Stats().ReauthenticationsRefused == 1 })
	if got := s.Stats().Reauthentications; got != 1 {
		t.Errorf("re-authentications %d, want 1", got)
	}
	if !log.Contains("the broker refused the new token") || log.Contains("eyJ") {
		t.Errorf("the log lacks the refusal, or shows a token:\n%s", log.String())
	}
}
