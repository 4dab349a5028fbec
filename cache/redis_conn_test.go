package cache

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// tlsTo is the TLS configuration of a client of the test CA p, with a
// client certificate when cert is not "".
func tlsTo(t *testing.T, p *testkit.PKI, cert, key string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: pool}
	if cert != "" {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg
}

func stringStore(url string, tlsCfg *tls.Config, password func() (string, error)) (*RedisDedup[string], error) {
	return NewRedisDedup(RedisConfig[string]{URL: url, Name: "conn-test", TLS: tlsCfg, Password: password,
		Encode:    func(v string) ([]byte, error) { return []byte(v), nil },
		Decode:    func(b []byte) (string, error) { return string(b), nil },
		OwnerGone: func(bool) string { return "gone" }})
}

// A Redis over TLS (private CA, client certificate required) with an
// ACL user: the stores connect as the URL's user with the password the
// provider gives; a wrong password or no CA fails with an error that
// names the store and never the password.
func TestRedisTLSWithACLUser(t *testing.T) {
	const pw = "Hunter2-redis-pw"
	pki := testkit.NewPKI(t)
	r := testkit.StartSecureRedis(t, testkit.RedisOptions{TLS: pki, RequireClientCert: true, Users: map[string]string{"cmdhost": pw}})
	url := strings.Replace(r.URL, "rediss://", "rediss://cmdhost@", 1)
	cert, key := pki.Client(t, "cmdhost")
	tlsCfg := tlsTo(t, pki, cert, key)
	var password atomic.Value
	password.Store(pw)
	provider := func() (string, error) { return password.Load().(string), nil }

	s, err := stringStore(url, tlsCfg, provider)
	if err != nil {
		t.Fatalf("connecting over TLS as cmdhost: %v", err)
	}
	defer s.Close()
	e, first, err := s.Claim("i", Key{Correlation: "c1", ResponseTopic: "r"}, time.Now().Add(time.Minute), false)
	if err != nil || !first {
		t.Fatalf("Claim = %v, %v", first, err)
	}
	s.Complete(e, "done", time.Now().Add(time.Minute))
	if got := s.Lookup(Key{Correlation: "c1", ResponseTopic: "r"}); got == nil || got.Value() != "done" {
		t.Fatalf("the outcome was not stored in Redis: %v", got)
	}
	c, err := NewRedisReuse(RedisReuseConfig[string]{URL: url, TLS: tlsCfg, Password: provider, Local: ReuseConfig{MaxBytes: 1 << 20},
		Encode: func(v string) ([]byte, error) { return []byte(v), nil }, Decode: func(b []byte) (string, error) { return string(b), nil }})
	if err != nil {
		t.Fatalf("reuse cache over TLS as cmdhost: %v", err)
	}
	c.Close()

	for name, try := range map[string]func() error{
		"wrong password": func() error {
			_, err := stringStore(url, tlsCfg, func() (string, error) { return "PW-WRONG-xyz", nil })
			return err
		},
		"a password in the URL, wrong": func() error {
			_, err := stringStore(strings.Replace(url, "cmdhost@", "cmdhost:PW-WRONG-xyz@", 1), tlsCfg, nil)
			return err
		},
		"no client certificate": func() error {
			_, err := stringStore(url, tlsTo(t, pki, "", ""), provider)
			return err
		},
		"no CA": func() error {
			_, err := stringStore(url, nil, provider)
			return err
		},
		"the password file unreadable": func() error {
			_, err := stringStore(url, tlsCfg, func() (string, error) { return "", errors.New("secret file /x/pw: no such file") })
			return err
		},
		"a URL that does not parse": func() error {
			_, err := stringStore("rediss://cmdhost:PW-WRONG-xyz@127.0.0.1:port/0", tlsCfg, nil)
			return err
		},
	} {
		err := try()
		if err == nil {
			t.Errorf("%s: connected", name)
			continue
		}
		t.Logf("%s: %v", name, err)
		if strings.Contains(err.Error(), "PW-WRONG") || strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
		if !strings.Contains(err.Error(), "dedup store rediss://") {
			t.Errorf("%s: the error does not name the store: %v", name, err)
		}
	}

	// A rotated password: the next connection uses it.
	password.Store("rotated-pw")
	if _, err := stringStore(url, tlsCfg, provider); err == nil {
		t.Fatal("connected with a password Redis does not know")
	}
}

// TLS settings with a redis:// URL are refused: they would be ignored.
func TestRedisTLSNeedsRediss(t *testing.T) {
	_, err := stringStore("redis://127.0.0.1:1/0", &tls.Config{}, nil)
	if err == nil || !strings.Contains(err.Error(), "rediss://") {
		t.Fatalf("err = %v, want one that names rediss://", err)
	}
}

// replyError is an error Redis answered with, as go-redis reports one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// Only an error that says Redis did not answer marks the store down; an
// error Redis answered with does not.
func TestRedisDownErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		down bool
	}{
		{io.EOF, true},
		{context.DeadlineExceeded, true},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{redis.ErrClosed, true},
		{redis.Nil, false},
		{replyError("OOM command not allowed when used memory > 'maxmemory'"), false},
		{replyError("NOREPLICAS Not enough good replicas to write"), false},
		{fmt.Errorf("claim: %w", replyError("MOVED 3999 127.0.0.1:6381")), false},
		{fmt.Errorf("%w: 0 of 1 replicas", errNotReplicated), false},
	} {
		if got := redisDown(c.err); got != c.down {
			t.Errorf("redisDown(%v) = %v, want %v", c.err, got, c.down)
		}
	}
}
