package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
)

// The dedup store and the reuse cache: in memory by default; with
// Config.Store, in Redis, shared by the replicas and restarts that name it
// (cache.RedisDedup; cache.RedisReuse, behind a tier in memory).
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

// newDedup makes the executor's dedup store.
func newDedup(cfg *Config) (cache.Dedup[*reply], error) {
	if cfg.Store == "" {
		return cache.NewBoundedDedupStore(cfg.dedupConfig(), dedupBound(cfg)), nil
	}
	s, err := cache.NewRedisDedup(cache.RedisConfig[*reply]{
		URL: cfg.Store, Name: cfg.ClientID, Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger,
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
	return s, nil
}

// newReuse makes the executor's reuse cache: in memory, or with
// Config.Store, in memory in front of Redis (cache.RedisReuse).
func newReuse(cfg *Config) (cache.Reuse[*reply], error) {
	local := cache.ReuseConfig{MaxBytes: cfg.ReuseMaxBytes, Now: cfg.Now}
	if local.MaxBytes == 0 {
		local.MaxBytes = DefaultReuseMaxBytes
	}
	if cfg.Store == "" {
		c, err := cache.NewReuseCache[*reply](local)
		if err != nil {
			return nil, fmt.Errorf("reuse cache: %w", err)
		}
		return c, nil
	}
	c, err := cache.NewRedisReuse(cache.RedisReuseConfig[*reply]{
		URL: cfg.Store, Local: local, Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return c, nil
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
