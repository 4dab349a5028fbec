// Package gate decides who may call a command and how often, by the
// request's verified caller (abi.Caller): the operator file's "allow"
// and "quota" (plugins.Command's Allow and Quota), enforced before the
// command runs. A refused call runs nothing and is answered with a
// protocol status (PROTOCOL.md "Who may call"):
//
//   - not allowed: 400 with __propName "Caller" and, when the host knows
//     a caller, __propVal naming it (no __propVal: it knows none, and a
//     command with an "allow" list admits verified callers only);
//   - over its quota: 503 with __propName "RetryAfter" and __propVal the
//     time left in the quota's window (ISO 8601, e.g. PT0.25S);
//   - the quota store unreachable or full: 503, to be sent again.
//
// Each refusal is logged with the caller, at most one line a second per
// kind (with the count of those left out).
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/plugins"
)

// CallerProperty is the __propName of a refusal for who the caller is.
const CallerProperty = "Caller"

// Config configures a Gate.
type Config struct {
	// Quotas counts the calls against quotas; nil: in memory
	// (cache.NewMemoryQuota), this host's calls alone.
	Quotas cache.QuotaStore
	// Clock places each call in its quota's window; nil: the system's.
	Clock clock.Clock
	// Logger receives the refusals; nil discards them.
	Logger *slog.Logger
}

// Gate admits calls. Safe for concurrent use: its state is the quota
// store's (safe) and the log limiters' (each with its mutex).
type Gate struct {
	quotas             cache.QuotaStore
	clock              clock.Clock
	log                *slog.Logger
	allowLog, quotaLog ratelog.Limiter
}

// New returns a Gate of cfg.
func New(cfg Config) *Gate {
	g := &Gate{quotas: cfg.Quotas, clock: clock.OrSystem(cfg.Clock), log: logx.OrDiscard(cfg.Logger)}
	if g.quotas == nil {
		g.quotas = cache.NewMemoryQuota(0)
	}
	g.allowLog.Interval, g.quotaLog.Interval = time.Second, time.Second
	return g
}

// Admit returns c's admission by its "allow" list, for rpc.Command.Admit:
// nil when c has none (anyone may call). It never blocks.
func (g *Gate) Admit(c plugins.Command) func(*abi.Request) *rpc.StatusError {
	if c.Allow == nil {
		return nil
	}
	allow := c.Allow
	return func(req *abi.Request) *rpc.StatusError {
		if allow.Allows(req.Caller) {
			return nil
		}
		if !req.Caller.Verified() {
			g.refused(&g.allowLog, c, req, "no verified caller: the command has an allow list")
			return &rpc.StatusError{Status: abi.StatusBadRequest, PropName: CallerProperty,
				Message: "command " + c.Name() + " admits verified callers only, and the host knows none for this request: send it through a broker that authenticates you (docs/security.md)"}
		}
		g.refused(&g.allowLog, c, req, "not in the command's allow list")
		return &rpc.StatusError{Status: abi.StatusBadRequest, PropName: CallerProperty, PropValue: callerName(req.Caller),
			Message: callerName(req.Caller) + " may not call command " + c.Name() + ": not in its allow list"}
	}
}

// Limit returns h behind c's quota: a call over it, or one the quota
// store cannot count, is refused before h runs. h itself when c has no
// quota.
func (g *Gate) Limit(c plugins.Command, h rpc.Handler) rpc.Handler {
	if c.Quota.IsZero() {
		return h
	}
	q, scope := c.Quota, c.QuotaKey
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		ok, retry, err := g.quotas.Take(ctx, scope+"\x00"+callerKey(req.Caller), q.Limit, q.Per, g.clock.Now())
		switch {
		case errors.Is(err, cache.ErrQuotaFull):
			g.refused(&g.quotaLog, c, req, "the quota store counts too many callers at once")
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable,
				Message: "the host is busy: it counts too many callers' quotas at once; send it again"}
		case err != nil:
			g.refused(&g.quotaLog, c, req, "the quota store is unreachable: "+err.Error())
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable,
				Message: "the quota store is unreachable: the request was not run; send it again"}
		case !ok:
			g.refused(&g.quotaLog, c, req, "over its quota of "+q.String())
			return nil, &rpc.StatusError{Status: abi.StatusServiceUnavailable, RetryAfter: retry,
				Message: fmt.Sprintf("%s is over its quota of %s for %s: send it again in %v", callerName(req.Caller), q.String(), scopeName(c), retry.Round(time.Millisecond))}
		}
		return h(ctx, req)
	}
}

// callerKey is what a quota counts a caller by: its verified user, else
// its verified client id, else "anonymous": the callers the host does
// not know share one count (were they counted by what they claim, one
// could use up another's, or claim a new name for each call).
// A name longer than maxKeyName (a client id may be 64 KiB) is counted
// by its SHA-256, so that what the quota store keeps per caller is
// bounded.
func callerKey(c abi.Caller) string {
	key := "anonymous"
	switch {
	case c.User != "":
		key = "user:" + c.User
	case c.ClientID != "":
		key = "client:" + c.ClientID
	}
	if len(key) > maxKeyName {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}

// maxKeyName bounds a caller's name in a quota key.
const maxKeyName = 256

// callerName names a caller in a refusal, each name cut and cleaned as
// the log's are: a client id may be 64 KiB of anything, and the refusal
// is published and kept for the request's duplicates.
func callerName(c abi.Caller) string {
	if !c.Verified() {
		return "an unverified caller (all of them share one count)"
	}
	return abi.Caller{User: session.CleanText(c.User, 128), ClientID: session.CleanText(c.ClientID, 128)}.String()
}

// scopeName says what a quota counts.
func scopeName(c plugins.Command) string {
	if c.QuotaKey == c.Plugin {
		return "plugin " + c.Plugin + "'s commands"
	}
	return "command " + c.Name()
}

// refused logs a refusal, at most once a second per limiter.
func (g *Gate) refused(l *ratelog.Limiter, c plugins.Command, req *abi.Request, why string) {
	ok, leftOut := l.Allow(g.clock.Now())
	if !ok {
		return
	}
	g.log.Warn("call refused", "command", c.Name(), "plugin", c.Plugin, "user", session.CleanText(req.Caller.User, 128),
		"client_id", session.CleanText(req.Caller.ClientID, 128), "src_id", session.CleanText(req.InvokerID, 128),
		"why", why, "refusals_not_logged", leftOut)
}

// Wrap returns h behind both c's allow list and its quota, for a call
// that does not go through the executor: a plugin's nested call to a
// command of its own host, made on behalf of its request's caller.
func (g *Gate) Wrap(c plugins.Command, h rpc.Handler) rpc.Handler {
	h = g.Limit(c, h)
	admit := g.Admit(c)
	if admit == nil {
		return h
	}
	return func(ctx context.Context, req *abi.Request) (*abi.Response, error) {
		if se := admit(req); se != nil {
			return nil, se
		}
		return h(ctx, req)
	}
}
