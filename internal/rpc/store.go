package rpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/state"
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
	// releasedReply answers a duplicate that waited on a claim its
	// executor released unrun (the claim's answer was lost).
	releasedReply  = statusReply(abi.StatusServiceUnavailable, "the request was not run: send it again", "", "")
	storeDownReply = statusReply(abi.StatusServiceUnavailable, "the dedup store is unreachable: the request was not run; send it again", "", "")
	// storeFullReply is storeDownReply when Redis is full (cache.ErrStoreFull).
	storeFullReply = statusReply(abi.StatusServiceUnavailable, "the dedup store is full (its Redis reached maxmemory): the request was not run; send it again once the operator has freed memory or raised maxmemory", "", "")
	// begunReply answers a request whose state writes began to be
	// committed and never ended (state.ErrUnknown from the outcomes).
	begunReply = statusReply(abi.StatusInternalError, "outcome unknown: the commit of this request's state writes began and did not end (its host stopped, or the state store stopped answering); they may have applied", "", "")
)

// storeRefusal is the 503 of a request to a non-idempotent command that
// the shared store could not record (err wraps cache.ErrStoreUnavailable).
func storeRefusal(err error) *reply {
	if errors.Is(err, cache.ErrStoreFull) {
		return storeFullReply
	}
	return storeDownReply
}

// storeTrouble names, for the log, what kept the shared store from
// recording a request.
func storeTrouble(err error) string {
	if errors.Is(err, cache.ErrStoreFull) {
		return "the dedup store is full (Redis maxmemory)"
	}
	return "the dedup store is unreachable"
}

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
// the Redis cfg names (cache.RedisConfig), so that they outlive the
// process and are shared by every executor naming it. Its files are read
// when the executor is made: a TLS file or password file it cannot read
// fails NewExecutor, naming the file.
func RedisStores(cfg RedisConfig) Stores { return redisStores{cfg: cfg} }

// RedisConfig is how the executor's stores reach Redis.
type RedisConfig struct {
	// URL is the Redis: redis://[USER@]HOST:PORT/DB, or rediss:// over
	// TLS, or Sentinel's or a cluster's (cache.RedisURLForms); its user
	// is the Redis ACL user. Required.
	URL string
	// CAFile is the PEM file of the certificate authorities a rediss://
	// server's certificate is checked against, read once; "": the
	// system's.
	CAFile string
	// CertFile and KeyFile are the client certificate and its key (for a
	// Redis with tls-auth-clients yes), read again at each TLS handshake,
	// so that a renewed pair is used by the next connection; both or
	// neither.
	CertFile, KeyFile string
	// Password, when set, returns the password of the URL's user, called
	// at each new connection (a rotated file is read by the next one;
	// secret.ReadFile); nil: the URL's password, if any. Its error must
	// not hold the password.
	Password func() (string, error)
	// State keeps the handlers' state in the same Redis (cache.RedisState,
	// on the dedup store's client), shared by every executor naming it:
	// it is the executor's Config.State (which must then be nil), and a
	// call's writes commit in the script that stores its outcome
	// (commit.go). Config.StateLimits bound it.
	State bool
}

// tls returns the TLS configuration of cfg's files; nil when it names
// none.
func (cfg RedisConfig) tls() (*tls.Config, error) {
	if cfg.CAFile == "" && cfg.CertFile == "" && cfg.KeyFile == "" {
		return nil, nil
	}
	if !strings.HasPrefix(cfg.URL, "rediss") {
		return nil, errors.New("a CA or client certificate is given, but the URL is not rediss://: use rediss:// to connect over TLS")
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", cfg.CAFile)
		}
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if cfg.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("client certificate %s and key %s: %w", cfg.CertFile, cfg.KeyFile, err)
		}
		t.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("client certificate %s and key %s: %w", cfg.CertFile, cfg.KeyFile, err)
			}
			return &c, nil
		}
	}
	return t, nil
}

// password returns the password provider of cfg; nil when it names none.
// The password is read once here, so that a file that cannot be read
// fails the start.
func (cfg RedisConfig) password() (func() (string, error), error) {
	if cfg.Password == nil {
		return nil, nil
	}
	if _, err := cfg.Password(); err != nil {
		return nil, fmt.Errorf("the store's password: %w", err)
	}
	return cfg.Password, nil
}

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

type redisStores struct{ cfg RedisConfig }

// conn reads the files of s: its TLS configuration and password
// provider, or an error that names the store (without its password) and
// the file.
func (s redisStores) conn() (*tls.Config, func() (string, error), error) {
	t, err := s.cfg.tls()
	if err == nil {
		var pw func() (string, error)
		if pw, err = s.cfg.password(); err == nil {
			return t, pw, nil
		}
	}
	return nil, nil, fmt.Errorf("store %s: %w", redact.String(s.cfg.URL), err)
}

func (s redisStores) dedup(cfg *Config) (cache.Dedup[*reply], error) {
	t, pw, err := s.conn()
	if err != nil {
		return nil, err
	}
	d, err := cache.NewRedisDedup(cache.RedisConfig[*reply]{
		URL: s.cfg.URL, TLS: t, Password: pw, Name: cfg.clientID(), Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger,
		OwnerGone: func(idempotent bool) *reply {
			if idempotent {
				return sendAgainReply
			}
			return ownerGoneReply
		},
		Released: func() *reply { return releasedReply },
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (s redisStores) reuse(cfg *Config) (cache.Reuse[*reply], error) {
	t, pw, err := s.conn()
	if err != nil {
		return nil, err
	}
	c, err := cache.NewRedisReuse(cache.RedisReuseConfig[*reply]{
		URL: s.cfg.URL, TLS: t, Password: pw, Local: reuseConfig(cfg), Encode: encodeReply, Decode: decodeReply, Logger: cfg.Logger})
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

// storedReply is a reply as the shared store and the state store keep
// it: encoding/json's encoding of it (encodeReply writes the same bytes
// by hand, replyjson.go).
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
	Raw         bool                `json:"raw,omitempty"`
	Timestamp   string              `json:"ts,omitempty"`
}

func encodeReply(r *reply) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no reply")
	}
	return appendStoredReply(make([]byte, 0, 96+len(r.message)+base64.StdEncoding.EncodedLen(len(r.payload))), r), nil
}

func decodeReply(b []byte) (*reply, error) {
	var s storedReply
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("a stored reply: %w", err)
	}
	return &reply{none: s.None, status: s.Status, appError: s.AppError, message: s.Message,
		propName: s.PropName, propValue: s.PropValue, extra: s.Extra, payload: s.Payload,
		contentType: s.ContentType, format: s.Format, metadata: s.Metadata, ttl: s.TTL, raw: s.Raw, ts: s.Timestamp}, nil
}

// StateStores keeps the outcome of each request to a non-idempotent
// command in the state store b, committed with the call's state writes
// (commit.go), so that a request delivered again after the host
// restarted, even after a kill -9, gets its outcome instead of running
// again. What runs now, and the outcomes of idempotent commands, are kept
// in memory as MemoryStores keeps them; so is the reuse cache.
func StateStores(b state.Backend) Stores { return stateStores{b: b} }

type stateStores struct{ b state.Backend }

func (s stateStores) dedup(cfg *Config) (cache.Dedup[*reply], error) {
	return &outcomeDedup{DedupStore: cache.NewBoundedDedupStore(cfg.dedupConfig(), dedupBound(cfg)), outcomes: s.b}, nil
}

func (stateStores) reuse(cfg *Config) (cache.Reuse[*reply], error) { return memoryStores{}.reuse(cfg) }

// outcomeDedup is the dedup store in memory, backed by the outcomes the
// state store kept: a first receipt (here) of a request whose outcome was
// recorded (before a restart) is its duplicate.
type outcomeDedup struct {
	*cache.DedupStore[*reply]
	outcomes state.Backend
}

// mayHaveOutcome reports whether the store may hold an outcome of key
// that a process before this one recorded: those of this process are in
// memory. A store that can tell at once that it holds none (state.Disk's
// MayHaveOutcome) saves a lookup on the receiving path.
func (d *outcomeDedup) mayHaveOutcome(key cache.Key) bool {
	if p, ok := d.outcomes.(state.OutcomeFilter); ok {
		return p.MayHaveOutcome(state.OutcomeID(key))
	}
	return true
}

// Claim looks in memory, then, for a non-idempotent command's request
// new here, in the state store. A store that cannot be read refuses the
// claim (cache.ErrStoreUnavailable: 503, not run): running it could run
// it twice. One that says the request's commit began and its fate is
// unknown (state.ErrUnknown: the host stopped while a store without
// transactions applied its writes, package stateaio) answers it
// begunReply, never a second run.
func (d *outcomeDedup) Claim(invoker string, key cache.Key, expiry time.Time, idempotent bool) (*cache.Entry[*reply], bool, error) {
	if idempotent || d.Lookup(key) != nil || !d.mayHaveOutcome(key) {
		return d.DedupStore.Claim(invoker, key, expiry, idempotent)
	}
	v, found, err := d.outcomes.Outcome(context.Background(), state.OutcomeID(key))
	unknown := errors.Is(err, state.ErrUnknown)
	if err != nil && !unknown {
		return nil, false, fmt.Errorf("%w: reading the outcomes kept: %w", cache.ErrStoreUnavailable, err)
	}
	e, first, err := d.DedupStore.Claim(invoker, key, expiry, idempotent)
	if err != nil || !first || !found && !unknown {
		return e, first, err
	}
	r := begunReply
	if !unknown {
		if r, err = decodeReply(v); err != nil {
			r = statusReply(abi.StatusInternalError, "outcome unknown: the outcome kept for this request cannot be read", "", "")
		}
	}
	d.Complete(e, r, expiry)
	return e, false, nil
}
