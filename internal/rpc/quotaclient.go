package rpc

import (
	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/cache"
)

// QuotaClient returns a client of the Redis cfg names (one server,
// Sentinel or a cluster: cache.RedisURLForms), with its TLS and password,
// for the per-caller quotas shared by the replicas (cache.RedisQuota);
// the caller closes it. Its files are read here: one that cannot be read
// is an error naming the store (without its password) and the file.
//
// It makes its own pool beside the stores' (the stores make theirs in
// package cache): one more connection or so per host.
func (cfg RedisConfig) QuotaClient() (redis.UniversalClient, error) {
	t, pw, err := redisStores{cfg: cfg}.conn()
	if err != nil {
		return nil, err
	}
	return cache.RedisClient(cfg.URL, t, pw)
}
