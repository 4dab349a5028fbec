package session

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The session logs in to a secured mosquitto, certificates and password
// file made by the test: a password, TLS on a private CA, client
// certificates (mTLS), each refused with its reason when wrong, and the
// password in no log line.

const testPassword = "Hunter2-s3cr3t-pw"

// attempt connects a session of auth to u and returns nil once a
// connection is up, or the first connection error. The session is
// disconnected when the test ends.
func attempt(t *testing.T, u *url.URL, auth Auth, log *testkit.LogBuffer) error {
	t.Helper()
	up, failed := make(chan struct{}, 1), make(chan error, 1)
	s, err := New(Config{Broker: u, Auth: auth, ClientID: "auth-" + strings.ReplaceAll(t.Name(), "/", "-"), Expiry: -1,
		ReconnectDelay: 20 * time.Millisecond, ReplyAckTimeout: -1, Logger: slog.New(slog.NewTextHandler(log, nil))},
		Handlers{
			Up: func(bool) {
				select {
				case up <- struct{}{}:
				default:
				}
			},
			ConnectError: func(err error) {
				select {
				case failed <- err:
				default:
				}
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Disconnect(context.Background()) })
	select {
	case <-up:
		return nil
	case err := <-failed:
		return err
	case <-time.After(testkit.Patience()):
		t.Fatal("neither connected nor refused")
		return nil
	}
}

func writeSecret(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuthPasswordWithMosquitto(t *testing.T) {
	u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{
		PasswordFile: brokertest.WritePasswordFile(t, map[string]string{"cmdhost": testPassword}),
	})
	var log testkit.LogBuffer
	t.Run("right password from a file", func(t *testing.T) {
		if err := attempt(t, u, Auth{Username: "cmdhost", PasswordFile: writeSecret(t, testPassword+"\n")}, &log); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	t.Run("right password from the environment, user in the URL", func(t *testing.T) {
		t.Setenv("TEST_MQTT_PASSWORD", testPassword)
		withUser := *u
		withUser.User = url.User("cmdhost")
		if err := attempt(t, &withUser, Auth{PasswordEnv: "TEST_MQTT_PASSWORD"}, &log); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	for _, c := range []struct {
		name string
		auth Auth
		code byte
	}{
		// mosquitto 2.0.11 answers a wrong password "not authorized"
		// (0x87), not "bad user name or password" (0x86): the session
		// says what the broker sent.
		{"wrong password", Auth{Username: "cmdhost", PasswordFile: writeSecret(t, "not-"+testPassword)}, 0x87},
		{"anonymous", Auth{}, 0x87},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := attempt(t, u, c.auth, &log)
			var refused *RefusedError
			if !errors.As(err, &refused) || refused.Code != c.code || !Refused(err) {
				t.Fatalf("got %v; want a refusal 0x%02X", err, c.code)
			}
			if want := ConnackText(c.code) + " (0x"; !strings.Contains(err.Error(), want) {
				t.Fatalf("%q does not say %q", err, want)
			}
		})
	}
	if strings.Contains(log.String(), testPassword) {
		t.Fatalf("the password is in the log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "(user cmdhost): not authorized (0x87)") || !strings.Contains(log.String(), "username=cmdhost") {
		t.Fatalf("the refusal is not logged with who was refused:\n%s", log.String())
	}
}

func TestAuthTLSWithMosquitto(t *testing.T) {
	ca := testkit.NewPKI(t)
	cert, key := ca.Server(t, "broker")
	u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{CertFile: cert, KeyFile: key})
	var log testkit.LogBuffer
	t.Run("without the CA", func(t *testing.T) {
		err := attempt(t, u, Auth{}, &log)
		var tlsErr *TLSError
		if !errors.As(err, &tlsErr) || !Refused(err) || !strings.Contains(err.Error(), "x509: certificate signed by unknown authority") {
			t.Fatalf("got %v; want the x509 error", err)
		}
	})
	t.Run("with the CA", func(t *testing.T) {
		if err := attempt(t, u, Auth{CAFile: ca.CAFile}, &log); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	t.Run("another server name", func(t *testing.T) {
		err := attempt(t, u, Auth{CAFile: ca.CAFile, ServerName: "broker.example"}, &log)
		if !Refused(err) || !strings.Contains(err.Error(), "not broker.example") {
			t.Fatalf("got %v; want the x509 name error", err)
		}
	})
	t.Run("by name, port defaulted", func(t *testing.T) {
		a, bare, err := Auth{}.resolve(&url.URL{Scheme: "mqtts", Host: "localhost"})
		if err != nil || bare.Host != "localhost:8883" || a != (Auth{}) {
			t.Fatalf("%v %v %v", a, bare, err)
		}
	})
}

// mTLS: a client without a certificate the broker's CA signed is refused;
// the certificate and key files are read at each connection, so the files
// replaced by a good pair are used by the next attempt, no restart.
func TestAuthClientCertificateWithMosquitto(t *testing.T) {
	ca := testkit.NewPKI(t)
	cert, key := ca.Server(t, "broker")
	u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{CertFile: cert, KeyFile: key, CAFile: ca.CAFile, RequireCertificate: true})
	var log testkit.LogBuffer
	t.Run("no client certificate", func(t *testing.T) {
		if err := attempt(t, u, Auth{CAFile: ca.CAFile}, &log); !Refused(err) {
			t.Fatalf("got %v; want a refusal", err)
		}
	})
	t.Run("a certificate of another CA, then a rotated good one", func(t *testing.T) {
		dir := t.TempDir()
		certFile, keyFile := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
		install := func(cert, key string) {
			for from, to := range map[string]string{cert: certFile, key: keyFile} {
				b, err := os.ReadFile(from)
				if err != nil {
					t.Fatal(err)
				}
				testkit.Install(t, dir, filepath.Base(to), b)
			}
		}
		install(testkit.NewPKI(t).Client(t, "cmdhost"))
		auth := Auth{CAFile: ca.CAFile, CertFile: certFile, KeyFile: keyFile}
		up, failed := make(chan struct{}, 1), make(chan error, 16)
		s, err := New(Config{Broker: u, Auth: auth, ClientID: "auth-rotate", Expiry: -1, ReconnectDelay: 20 * time.Millisecond,
			ReplyAckTimeout: -1, Logger: slog.New(slog.NewTextHandler(&log, nil))},
			Handlers{
				Up: func(bool) {
					select {
					case up <- struct{}{}:
					default: // paho's goroutine never waits on the test
					}
				},
				ConnectError: func(err error) {
					select {
					case failed <- err:
					default:
					}
				},
			})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Connect(); err != nil {
			t.Fatal(err)
		}
		defer s.Disconnect(context.Background())
		select {
		case err := <-failed:
			if !Refused(err) {
				t.Fatalf("got %v; want the certificate refused", err)
			}
		case <-up:
			t.Fatal("connected with a certificate of another CA")
		case <-time.After(testkit.Patience()): // a hang guard
			t.Fatal("no connection attempt ended")
		}
		install(ca.Client(t, "cmdhost"))
		select {
		case <-up:
		case <-time.After(testkit.Patience()):
			t.Fatalf("the rotated certificate was not used: %s", log.String())
		}
	})
}

func TestAuthResolve(t *testing.T) {
	for _, c := range []struct {
		url  string
		auth Auth
		want string
	}{
		{"mqtt://u:pw@h:1", Auth{}, "carries a password"},
		{"mqtt://u@h:1", Auth{Username: "v"}, `names user "u"`},
		{"mqtt://h:1", Auth{CAFile: "x"}, "plain TCP: use mqtts://h:1"},
		{"mqtts://h:1", Auth{CertFile: "x"}, "both its certificate file and its key file"},
		{"mqtts://h:1", Auth{PasswordFile: "x", PasswordEnv: "Y"}, "not both"},
	} {
		u, _ := url.Parse(c.url)
		_, _, err := c.auth.resolve(u)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s %+v: %v; want %q", c.url, c.auth, err, c.want)
		}
	}
	a, u, err := Auth{}.resolve(&url.URL{Scheme: "mqtt", Host: "h", User: url.User("me")})
	if err != nil || a.Username != "me" || u.User != nil || u.Host != "h:1883" {
		t.Fatalf("%+v %v %v", a, u, err)
	}
	if err := (Auth{PasswordFile: writeSecret(t, "\n")}).Check(); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty password file: %v", err)
	}
}
