package cache

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// redisConn is how the Redis stores reach Redis: the URL, TLS and
// Password fields of RedisConfig and RedisReuseConfig.
type redisConn struct {
	url      string
	tls      *tls.Config
	password func() (string, error)
}

// redacted is the URL fit to print.
func (c redisConn) redacted() string { return redact.String(c.url) }

// The topologies a store URL names (RedisURLForms).
const (
	redisSingle   = "single"
	redisSentinel = "sentinel"
	redisCluster  = "cluster"
)

// RedisURLForms are the forms of a store URL, for errors and help.
const RedisURLForms = "redis://[USER@]HOST:PORT/DB, rediss://… (TLS), " +
	"redis+sentinel://[USER@]HOST:PORT[,HOST:PORT…]/MASTER[/DB] (rediss+sentinel:// over TLS), " +
	"redis-cluster://[USER@]HOST:PORT[,HOST:PORT…] (rediss-cluster:// over TLS)"

// Client settings of every topology. A call may be retried (each
// script is idempotent for its caller: a retried claim finds its own
// claim and takes it back, a retried settle finds its outcome) a few
// times, quickly, on what go-redis deems passing (LOADING, READONLY
// during a failover, TRYAGAIN and CLUSTERDOWN during a reshard, a
// broken connection); MOVED and ASK are followed. Every call is bounded
// by its context (redisOpTimeout), retries included.
const (
	redisMaxRetries   = 3
	redisMinBackoff   = 8 * time.Millisecond
	redisMaxBackoff   = 128 * time.Millisecond
	redisMaxRedirects = 8
)

// RedisTopology reports which topology url names: "single", "sentinel"
// or "cluster"; an error names the forms it accepts.
func RedisTopology(rawURL string) (string, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", fmt.Errorf("not a URL (want %s)", RedisURLForms)
	}
	switch scheme {
	case "redis", "rediss":
		return redisSingle, nil
	case "redis+sentinel", "rediss+sentinel":
		return redisSentinel, nil
	case "redis-cluster", "rediss-cluster":
		return redisCluster, nil
	}
	return "", fmt.Errorf("scheme %q is not one a store URL takes: %s%s (want %s)",
		scheme, strings.Join(redisSchemes, ", "), schemeHint(scheme), RedisURLForms)
}

// redisSchemes are the schemes of RedisURLForms.
var redisSchemes = []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel", "redis-cluster", "rediss-cluster"}

// schemeHint names the scheme of redisSchemes that scheme misspells (its
// case, its '+' or '-'): "" when none.
func schemeHint(scheme string) string {
	norm := strings.NewReplacer("+", "", "-", "", "_", "").Replace
	for _, s := range redisSchemes {
		if norm(strings.ToLower(scheme)) == norm(s) {
			return fmt.Sprintf("; did you mean %s://?", s)
		}
	}
	return ""
}

// multiURL is a redis+sentinel:// or redis-cluster:// URL parsed.
type multiURL struct {
	tls    bool
	user   string
	addrs  []string
	master string // sentinel: the master's name
	db     int
}

// parseMultiURL parses a URL whose host is a list of HOST:PORT; its
// errors never quote the URL (it may hold a password).
func parseMultiURL(rawURL, topology string) (multiURL, error) {
	scheme, rest, _ := strings.Cut(rawURL, "://")
	var m multiURL
	m.tls = strings.HasPrefix(scheme, "rediss")
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		return m, errors.New("a store URL takes no query or fragment")
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		user := hosts[:at]
		hosts = hosts[at+1:]
		if strings.Contains(user, ":") {
			return m, errors.New("a password in the URL: give it apart (the password provider)")
		}
		u, err := url.PathUnescape(user)
		if err != nil {
			return m, errors.New("the URL's user is not URL-encoded")
		}
		m.user = u
	}
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" || port == "" {
			return m, fmt.Errorf("%q is not HOST:PORT", redact.String(h))
		}
		m.addrs = append(m.addrs, h)
	}
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	switch topology {
	case redisSentinel:
		if len(parts) == 0 || len(parts) > 2 {
			return m, errors.New("want /MASTER[/DB] after the Sentinels: the name Sentinel monitors the master by")
		}
		m.master = parts[0]
		parts = parts[1:]
	case redisCluster:
		if len(parts) > 0 {
			return m, errors.New("a cluster URL has no path: a Redis Cluster has one database")
		}
	}
	if len(parts) == 1 {
		db, err := strconv.Atoi(parts[0])
		if err != nil || db < 0 {
			return m, fmt.Errorf("database %q is not a number", parts[0])
		}
		m.db = db
	}
	return m, nil
}

// RedisClient returns a client of the Redis rawURL names, in any form of
// RedisURLForms, with the TLS configuration and password source the
// stores take (RedisConfig.TLS, Password) and their timeouts and retries:
// for what else a host keeps in the store's Redis (the per-caller quotas,
// RedisQuota). The caller closes it. An error names the forms, never the
// password.
func RedisClient(rawURL string, tlsConf *tls.Config, password func() (string, error)) (redis.UniversalClient, error) {
	c, _, err := newRedisClient(redisConn{url: rawURL, tls: tlsConf, password: password})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redact.String(rawURL), err)
	}
	return c, nil
}

// newRedisClient returns a client of the Redis c names — one server,
// a master found through Sentinel (it follows failovers), or a cluster
// (it follows MOVED and ASK) — whose calls fail after redisOpTimeout.
func newRedisClient(c redisConn) (redis.UniversalClient, string, error) {
	topology, err := RedisTopology(c.url)
	if err != nil {
		return nil, "", err
	}
	var creds func(context.Context) (string, string, error)
	withCreds := func(user string) {
		if c.password != nil {
			creds = func(context.Context) (string, string, error) {
				pw, err := c.password()
				return user, pw, err
			}
		}
	}
	if topology == redisSingle {
		opt, err := redis.ParseURL(c.url)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) { // its text quotes the whole URL, password included
				err = ue.Err
			}
			return nil, "", fmt.Errorf("%w (want %s)", err, RedisURLForms)
		}
		if opt.TLSConfig, err = c.tlsFor(opt.TLSConfig != nil, hostOf(opt.Addr)); err != nil {
			return nil, "", err
		}
		withCreds(opt.Username)
		opt.CredentialsProviderContext = creds
		opt.ReadTimeout, opt.WriteTimeout, opt.DialTimeout = redisOpTimeout, redisOpTimeout, redisOpTimeout
		opt.MaxRetries, opt.MinRetryBackoff, opt.MaxRetryBackoff = redisMaxRetries, redisMinBackoff, redisMaxBackoff
		return redis.NewClient(opt), topology, nil
	}
	m, err := parseMultiURL(c.url, topology)
	if err != nil {
		return nil, "", fmt.Errorf("%w (want %s)", err, RedisURLForms)
	}
	// No ServerName: each connection checks the certificate against the
	// host it dials (a Sentinel, the primary it names, a cluster node).
	t, err := c.tlsFor(m.tls, "")
	if err != nil {
		return nil, "", err
	}
	withCreds(m.user)
	if topology == redisSentinel {
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: m.master, SentinelAddrs: m.addrs, DB: m.db, TLSConfig: t,
			Username: m.user, CredentialsProviderContext: creds,
			ReadTimeout: redisOpTimeout, WriteTimeout: redisOpTimeout, DialTimeout: redisOpTimeout,
			MaxRetries: redisMaxRetries, MinRetryBackoff: redisMinBackoff, MaxRetryBackoff: redisMaxBackoff,
		}), topology, nil
	}
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: m.addrs, TLSConfig: t, Username: m.user, CredentialsProviderContext: creds,
		ReadTimeout: redisOpTimeout, WriteTimeout: redisOpTimeout, DialTimeout: redisOpTimeout,
		MaxRetries: redisMaxRetries, MinRetryBackoff: redisMinBackoff, MaxRetryBackoff: redisMaxBackoff,
		MaxRedirects: redisMaxRedirects,
	}), topology, nil
}

// tlsFor is the TLS configuration of a URL that asks for TLS (tlsURL)
// or not, to a server named host.
func (c redisConn) tlsFor(tlsURL bool, host string) (*tls.Config, error) {
	if !tlsURL {
		if c.tls != nil {
			return nil, errors.New("TLS settings given for a redis:// URL: use rediss:// to connect over TLS")
		}
		return nil, nil
	}
	t := &tls.Config{}
	if c.tls != nil {
		t = c.tls.Clone()
	}
	if t.ServerName == "" {
		t.ServerName = host
	}
	if t.MinVersion == 0 {
		t.MinVersion = tls.VersionTLS12
	}
	return t, nil
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// CheckRedisURL checks that rawURL is a store URL of one of the forms
// RedisURLForms lists, without connecting; its error never quotes the
// URL.
func CheckRedisURL(rawURL string) error {
	topology, err := RedisTopology(rawURL)
	if err != nil {
		return err
	}
	if topology == redisSingle {
		if _, err := redis.ParseURL(rawURL); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return fmt.Errorf("%w (want %s)", err, RedisURLForms)
		}
		return nil
	}
	if _, err := parseMultiURL(rawURL, topology); err != nil {
		return fmt.Errorf("%w (want %s)", err, RedisURLForms)
	}
	return nil
}
