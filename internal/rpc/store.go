package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// The dedup store and the reuse cache, which the executor's owner picks
// (Config.Stores): in memory (MemoryStores, the default), or in Redis
// (RedisStores: cache.RedisDedup; cache.RedisReuse, behind a tier in
// memory), shared by the replicas and restarts that name the same Redis.
// There a request whose executor stopped without storing its outcome
// gets ownerGoneReply when its command is not idempotent, never a second
// run; an idempotent one runs again when sent again.

var (
	ownerGoneReply = statusReply(abi.StatusInternalError, "outcome unknown: the executor running the request stopped before its reply was stored", "", "")
	sendAgainReply = statusReply(abi.StatusServiceUnavailable, "the executor running the request stopped; send it again", "", "")
	// storeDownReply answers a request to a non-idempotent command when
	// the shared store cannot record it: running it unrecorded could run
	// it twice.
	storeDownReply = statusReply(abi.StatusServiceUnavailable, "the dedup store is unreachable: the request was not run; send it again", "", "")
)

// Stores makes an executor's dedup store and reuse cache from its
// resolved Config: MemoryStores or RedisStores. The replies they hold are
// the executor's own type, so only this package makes them.
type Stores interface {
	dedup(cfg *Config) (cache.Dedup[*reply], error)
	reuse(cfg *Config) (cache.Reuse[*reply], error)
}

// MemoryStores keeps the dedup store and the reuse cache in the
// executor's memory, bounded by Config's MaxDedupEntries,
// MaxDedupPerInvoker, MaxDedupBytes and ReuseMaxBytes: they last as long
// as the process.
func MemoryStores() Stores { return memoryStores{} }

// RedisStores keeps the dedup store and the reuse cache's shared tier in
// the Redis at url (redis://HOST:PORT/DB, cache.RedisConfig), so that
// they outlive the process and are shared by every executor naming it.
func RedisStores(url string) Stores { return redisStores{url: url} }

type memoryStores struct{}

func (memoryStores) dedup(cfg *Config) (cache.Dedup[*reply], error) {
	return cache.NewBoundedDedupStore(cfg.dedupConfig(), dedupBound(cfg)), nil
}

func (memoryStores) reuse(cfg *Config) (cache.Reuse[*reply], error) {
	c, err := cache.NewReuseCache[*reply](reuseConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("reuse cache: %w", err)
	}
	return c, nil
}

type redisStores struct{ url string }

func (s redisStores) dedup(cfg *Config) (cache.Dedup[*reply], error) {
	d, err := cache.NewRedisDedup(cache.RedisConfig[*reply]{
		URL: s.url, Name: cfg.clientID(), Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger,
		OwnerGone: func(idempotent bool) *reply {
			if idempotent {
				return sendAgainReply
			}
			return ownerGoneReply
		},
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (s redisStores) reuse(cfg *Config) (cache.Reuse[*reply], error) {
	c, err := cache.NewRedisReuse(cache.RedisReuseConfig[*reply]{
		URL: s.url, Local: reuseConfig(cfg), Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// reuseConfig is the reuse cache's configuration in memory (the whole
// cache, or Redis's local tier).
func reuseConfig(cfg *Config) cache.ReuseConfig {
	local := cache.ReuseConfig{MaxBytes: cfg.ReuseMaxBytes, Clock: cfg.Clock}
	if local.MaxBytes == 0 {
		local.MaxBytes = DefaultReuseMaxBytes
	}
	return local
}

// storedReply is a reply as the shared store keeps it.
type storedReply struct {
	None        bool                `json:"none,omitempty"`
	Status      abi.Status          `json:"status"`
	AppError    bool                `json:"appError,omitempty"`
	Message     string              `json:"message,omitempty"`
	PropName    string              `json:"propName,omitempty"`
	PropValue   string              `json:"propValue,omitempty"`
	Extra       map[string]string   `json:"extra,omitempty"`
	Payload     []byte              `json:"payload,omitempty"`
	ContentType string              `json:"contentType,omitempty"`
	Format      abi.FormatIndicator `json:"format,omitempty"`
	Metadata    map[string]string   `json:"metadata,omitempty"`
	TTL         *time.Duration      `json:"ttl,omitempty"`
}

func encodeReply(r *reply) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no reply")
	}
	return json.Marshal(storedReply{None: r.none, Status: r.status, AppError: r.appError, Message: r.message,
		PropName: r.propName, PropValue: r.propValue, Extra: r.extra, Payload: r.payload,
		ContentType: r.contentType, Format: r.format, Metadata: r.metadata, TTL: r.ttl})
}

func decodeReply(b []byte) (*reply, error) {
	var s storedReply
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("a stored reply: %w", err)
	}
	return &reply{none: s.None, status: s.Status, appError: s.AppError, message: s.Message,
		propName: s.PropName, propValue: s.PropValue, extra: s.Extra, payload: s.Payload,
		contentType: s.ContentType, format: s.Format, metadata: s.Metadata, ttl: s.TTL}, nil
}
