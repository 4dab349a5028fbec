package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/internal/redact"
)

// quotaOpTimeout bounds each quota check's round trip to Redis, as the
// stores' are bounded: a check that fails is a 503, not a hung call.
const quotaOpTimeout = 2 * time.Second

// QuotaClient returns a client of the Redis cfg names, with its TLS and
// password, for the per-caller quotas shared by the replicas
// (cache.RedisQuota); the caller closes it. Its files are read here: one
// that cannot be read is an error naming the store (without its
// password) and the file.
//
// It makes its own pool beside the stores' (the stores make theirs in
// package cache): one more connection or so per host.
func (cfg RedisConfig) QuotaClient() (redis.UniversalClient, error) {
	t, pw, err := redisStores{cfg: cfg}.conn()
	if err != nil {
		return nil, err
	}
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text quotes the whole URL, password included
			err = ue.Err
		}
		return nil, fmt.Errorf("store %s: %w", redact.String(cfg.URL), err)
	}
	if t != nil {
		if opt.TLSConfig != nil && t.ServerName == "" {
			t.ServerName = opt.TLSConfig.ServerName
		}
		if t.MinVersion == 0 {
			t.MinVersion = tls.VersionTLS12
		}
		opt.TLSConfig = t
	}
	if pw != nil {
		user := opt.Username
		opt.CredentialsProviderContext = func(context.Context) (string, string, error) {
			p, err := pw()
			return user, p, err
		}
	}
	opt.ReadTimeout, opt.WriteTimeout, opt.DialTimeout = quotaOpTimeout, quotaOpTimeout, quotaOpTimeout
	opt.MaxRetries = -1
	return redis.NewClient(opt), nil
}
