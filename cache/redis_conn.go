package cache

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"

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

// newRedisClient returns a client of the Redis c names whose calls fail
// after redisOpTimeout, without retries: a failure is reported at once,
// and the stores find Redis back by themselves.
func newRedisClient(c redisConn) (*redis.Client, error) {
	opt, err := redis.ParseURL(c.url)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text quotes the whole URL, password included
			err = ue.Err
		}
		return nil, fmt.Errorf("%w (want redis://[USER@]HOST:PORT/DB or rediss://…)", err)
	}
	if c.tls != nil {
		if opt.TLSConfig == nil {
			return nil, errors.New("TLS settings given for a redis:// URL: use rediss:// to connect over TLS")
		}
		t := c.tls.Clone()
		if t.ServerName == "" {
			t.ServerName = opt.TLSConfig.ServerName
		}
		if t.MinVersion == 0 {
			t.MinVersion = tls.VersionTLS12
		}
		opt.TLSConfig = t
	}
	if c.password != nil {
		user := opt.Username
		opt.CredentialsProviderContext = func(context.Context) (string, string, error) {
			pw, err := c.password()
			return user, pw, err
		}
	}
	opt.ReadTimeout, opt.WriteTimeout, opt.DialTimeout = redisOpTimeout, redisOpTimeout, redisOpTimeout
	opt.MaxRetries = -1
	return redis.NewClient(opt), nil
}
