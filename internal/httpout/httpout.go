// Package httpout sends the HTTP requests of plugins (abi.FnHTTPRequest):
// a Client per plugin version, made from the plugin's Grant, which is the
// only way out.
//
// What a Client refuses, and where:
//
//   - a URL that is not http or https, holds a user, or whose scheme, host
//     and port no pattern of the grant covers, and a method it does not
//     list: before anything is sent (abi.HTTPDenied);
//   - an address that is not public (loopback, private, link-local with
//     the clouds' metadata endpoints, multicast, unspecified, shared and
//     other reserved ranges; IPv4 and IPv6, an IPv4-mapped, NAT64 or 6to4
//     address by the IPv4 address it carries) unless the grant names it:
//     at connect time, on the address actually dialled (net.Dialer's
//     Control), so that no name, DNS answer changed between a check and
//     the connection (rebinding) or redirect reaches one;
//   - a redirect to a URL or method the grant does not cover, or past the
//     grant's count;
//   - a proxy: none is used, whatever the environment says;
//   - TLS below 1.2, or a certificate the system's roots (or the grant's
//     CA file) do not verify for the name.
//
// Every request is bounded (its body, the response's headers and body,
// read until the bound and then cut; its time, within the call's
// deadline), rate-limited per plugin, counted (Stats) and, when the call
// is traced, a client span with the host and the status; no body, header
// or query is logged.
package httpout

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/logx"
	"github.com/cmdhost/cmdhost/internal/ratelog"
	"github.com/cmdhost/cmdhost/internal/setting"
)

// Config configures a Client.
type Config struct {
	// Plugin names the plugin in logs and refusals.
	Plugin string
	// Logger receives refusals (at most one a second) and, at debug
	// level, each request's host, status and duration; nil discards.
	Logger *slog.Logger
	// Stats counts the requests; nil counts nothing.
	Stats *Stats
}

// maxResponseHeaderBytes bounds a response's headers.
const maxResponseHeaderBytes = 64 << 10

// userAgent is the User-Agent of a request that sets none.
const userAgent = "cmdhost"

// tracerName names the tracer of the request spans (host/tracing.go's).
const tracerName = "github.com/cmdhost/cmdhost"

// Client sends one plugin version's requests. Safe for concurrent use.
type Client struct {
	plugin    string
	grant     Grant
	transport *http.Transport
	client    *http.Client
	log       *slog.Logger
	stats     *Stats
	refused   ratelog.Limiter
	rate      *ratelog.Rate
}

// New returns the Client of grant g; an error when the grant's CA file
// cannot be read. Close releases its idle connections.
func New(g Grant, cfg Config) (*Client, error) {
	g = g.withDefaults()
	c := &Client{plugin: cfg.Plugin, grant: g, log: logx.OrDiscard(cfg.Logger), stats: cfg.Stats,
		refused: ratelog.Limiter{Interval: time.Second}, rate: ratelog.NewRate(g.Rate, g.Burst)}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.CAFile != "" {
		pem, err := os.ReadFile(g.CAFile)
		if err != nil {
			return nil, fmt.Errorf("the HTTP grant's CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the HTTP grant's CA file %s holds no PEM certificate", g.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: g.Timeout, KeepAlive: 30 * time.Second, Control: c.control}
	c.transport = &http.Transport{
		Proxy:                  nil, // never the environment's
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    g.Timeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	c.client = &http.Client{Transport: c.transport, CheckRedirect: c.checkRedirect}
	return c, nil
}

// Close closes the Client's idle connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Grant returns the Client's grant, with its defaults.
func (c *Client) Grant() Grant { return c.grant }

// refusedAddr is the error of a connection refused for its address.
type refusedAddr struct {
	addr  netip.AddrPort
	class string
}

func (e *refusedAddr) Error() string {
	return fmt.Sprintf("address %s is %s: the grant does not name it", e.addr, e.class)
}

// control refuses, before the connection is made, an address that is not
// public and that the grant does not name. It sees every address dialled,
// whatever name or redirect led to it.
func (c *Client) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedAddr{class: "not an address (" + address + ")"}
	}
	if class := addrClass(ap.Addr()); class != "" && !c.grant.explicit(ap.Addr(), int(ap.Port())) {
		return &refusedAddr{addr: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), class: class}
	}
	return nil
}

// redirectError is a redirect refused.
type redirectError struct {
	reason abi.HTTPReason
	msg    string
}

func (e *redirectError) Error() string { return e.msg }

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.grant.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > c.grant.MaxRedirects {
		return &redirectError{abi.HTTPRedirects, fmt.Sprintf("more than %d redirects (the grant's maxRedirects)", c.grant.MaxRedirects)}
	}
	t, err := targetOf(req.URL)
	if err != nil {
		return &redirectError{abi.HTTPDenied, "a redirect to a URL that cannot be requested: " + err.Error()}
	}
	if hostOK, methodOK := c.grant.granted(t, req.Method); !hostOK || !methodOK {
		c.refuse(t, req.Method, hostOK, true)
		what := t.String()
		if hostOK {
			what = "method " + req.Method
		}
		return &redirectError{abi.HTTPDenied, "a redirect to " + t.String() + ": the grant does not cover " + what}
	}
	return nil
}

// Do sends r and returns the response, or the reason why there is none.
// ctx is the call's: when it ends, the request is cut. key, when not "",
// is the request's Idempotency-Key (unless r sets one).
func (c *Client) Do(ctx context.Context, r *abi.HTTPRequest, key string) *abi.HTTPResult {
	start := time.Now()
	res := c.do(ctx, r, key)
	outcome := res.Failure.String()
	if res.Failure == abi.HTTPNone {
		outcome = strconv.Itoa(res.Status/100) + "xx"
	}
	c.stats.Record(outcome, time.Since(start))
	return res
}

func failure(reason abi.HTTPReason, format string, args ...any) *abi.HTTPResult {
	return &abi.HTTPResult{Failure: reason, Message: fmt.Sprintf(format, args...)}
}

func (c *Client) do(ctx context.Context, r *abi.HTTPRequest, key string) *abi.HTTPResult {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return failure(abi.HTTPInvalid, "the URL does not parse: %v", errors.Unwrap(err))
	}
	t, err := targetOf(u)
	if err != nil {
		return failure(abi.HTTPInvalid, "%v", err)
	}
	ctx, end := c.span(ctx, method, t)
	start := time.Now()
	res := c.send(ctx, r, method, u, t, key)
	end(res)
	c.log.Debug("HTTP request", "plugin", c.plugin, "method", method, "host", t.String(), "status", res.Status,
		"failure", res.Failure.String(), "duration", time.Since(start))
	return res
}

// send checks the request to u (where t says) against the grant, then
// sends it.
func (c *Client) send(ctx context.Context, r *abi.HTTPRequest, method string, u *url.URL, t target, key string) *abi.HTTPResult {
	if hostOK, methodOK := c.grant.granted(t, method); !hostOK || !methodOK {
		c.refuse(t, method, hostOK, false)
		if !hostOK {
			return failure(abi.HTTPDenied, "%s is not granted (the operator file's \"http\": {\"hosts\": [...]})", t)
		}
		return failure(abi.HTTPDenied, "method %s is not granted for %s (the operator file's \"http\": {\"methods\": [...]})", method, t)
	}
	if len(r.Body) > c.grant.MaxRequestBytes {
		return failure(abi.HTTPTooLarge, "the request's body is %d bytes, over the grant's bound of %d (maxRequestBytes)", len(r.Body), c.grant.MaxRequestBytes)
	}
	if !c.rate.Take(time.Now()) {
		c.note("HTTP request refused: the plugin sends faster than its rate", "rate", c.grant.Rate, "burst", c.grant.Burst)
		return failure(abi.HTTPLimit, "over the plugin's rate of %g requests a second, bursts of %d", c.grant.Rate, c.grant.Burst)
	}
	timeout := c.grant.Timeout
	if r.Timeout > 0 && r.Timeout < timeout {
		timeout = r.Timeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		return failure(abi.HTTPInvalid, "%v", err)
	}
	if len(r.Body) == 0 {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	}
	req.Header = http.Header(r.Header).Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if key != "" && req.Header.Get(abi.IdempotencyKeyHeader) == "" {
		req.Header.Set(abi.IdempotencyKeyHeader, key)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return c.exchange(ctx, rctx, req, timeout)
}

// exchange sends req and reads its response, within rctx (ctx bounded by
// timeout).
func (c *Client) exchange(ctx, rctx context.Context, req *http.Request, timeout time.Duration) *abi.HTTPResult {
	resp, err := c.client.Do(req)
	if err != nil {
		return c.failed(ctx, rctx, err, timeout)
	}
	defer resp.Body.Close()
	limit := c.grant.MaxResponseBytes
	if resp.ContentLength > int64(limit) {
		return failure(abi.HTTPTooLarge, "the response's body is %d bytes, over the grant's bound of %d (maxResponseBytes)", resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case len(body) > limit:
		return failure(abi.HTTPTooLarge, "the response's body is over the grant's bound of %d bytes (maxResponseBytes): cut there", limit)
	case err != nil:
		return c.failed(ctx, rctx, err, timeout)
	}
	return &abi.HTTPResult{HTTPResponse: abi.HTTPResponse{Status: resp.StatusCode, Header: abi.Header(resp.Header),
		Body: body, URL: resp.Request.URL.String()}}
}

// failed says why a request failed.
func (c *Client) failed(ctx, rctx context.Context, err error, timeout time.Duration) *abi.HTTPResult {
	var (
		refused  *refusedAddr
		redirect *redirectError
		dns      *net.DNSError
		op       *net.OpError
		netErr   net.Error
	)
	inner := err
	if ue, ok := err.(*url.Error); ok {
		inner = ue.Err
	}
	switch {
	case errors.As(err, &refused):
		if refused.addr.IsValid() {
			c.note("HTTP request refused: its address is not public and the grant does not name it", "address", refused.addr.String(),
				"class", refused.class, "grant", `"http": {"privateNetworks": ["`+refused.addr.Addr().String()+`"]} in `+c.plugin+`.json`)
		}
		return failure(abi.HTTPDenied, "%v", refused)
	case errors.As(err, &redirect):
		return failure(redirect.reason, "%s", redirect.msg)
	case ctx.Err() != nil:
		return failure(abi.HTTPTimeout, "the call's deadline passed, or it was cancelled, during the request")
	case rctx.Err() != nil || (errors.As(err, &netErr) && netErr.Timeout()):
		return failure(abi.HTTPTimeout, "no response within %v", timeout)
	case errors.As(err, &dns): // not dns's own text, which names the host's DNS server
		return failure(abi.HTTPDNS, "%s does not resolve: %s", dns.Name, dns.Err)
	case isTLS(err):
		return failure(abi.HTTPTLS, "%v", inner)
	case errors.As(err, &op) && op.Op == "dial":
		return failure(abi.HTTPConnect, "%v", op)
	case strings.Contains(err.Error(), "response headers exceeded"):
		return failure(abi.HTTPTooLarge, "the response's headers are over %d bytes", maxResponseHeaderBytes)
	}
	return failure(abi.HTTPFailed, "%v", inner)
}

// isTLS reports whether err is a TLS handshake's failure.
func isTLS(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &record) || errors.As(err, &alert) || strings.Contains(err.Error(), "tls: ")
}

// span starts the request's client span when the call is traced (its
// context holds a recording span); end ends it with the result.
func (c *Client) span(ctx context.Context, method string, t target) (context.Context, func(*abi.HTTPResult)) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, func(*abi.HTTPResult) {}
	}
	host := t.name
	if t.addr.IsValid() {
		host = t.addr.String()
	}
	ctx, span := parent.TracerProvider().Tracer(tracerName).Start(ctx, "cmdhost.http "+method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("url.scheme", t.scheme),
			attribute.String("server.address", host), attribute.Int("server.port", t.port), attribute.String("cmdhost.plugin", c.plugin)))
	return ctx, func(res *abi.HTTPResult) {
		if res.Failure != abi.HTTPNone {
			span.SetAttributes(attribute.String("error.type", res.Failure.String()))
			span.SetStatus(codes.Error, res.Failure.String())
		} else {
			span.SetAttributes(attribute.Int("http.response.status_code", res.Status))
			if res.Status >= 500 {
				span.SetStatus(codes.Error, strconv.Itoa(res.Status))
			}
		}
		span.End()
	}
}

// refuse logs a URL or method the grant does not cover, with the grant
// that would.
func (c *Client) refuse(t target, method string, hostOK, redirect bool) {
	what := "HTTP request refused: the operator file does not grant its host"
	grant := `"http": {"hosts": ["` + t.pattern() + `"]} in ` + c.plugin + `.json`
	if hostOK {
		what = "HTTP request refused: the operator file does not grant its method"
		grant = `"http": {"methods": [..., "` + method + `"]} in ` + c.plugin + `.json`
	}
	if redirect {
		what += " (a redirect)"
	}
	c.note(what, "method", method, "host", t.String(), "grant", grant)
}

// note logs a refusal, at most once a second per plugin.
func (c *Client) note(msg string, args ...any) {
	ok, leftOut := c.refused.Allow(time.Now())
	if !ok {
		return
	}
	args = append([]any{"plugin", c.plugin}, args...)
	if leftOut > 0 {
		args = append(args, "refusals_not_logged", leftOut)
	}
	c.log.Warn(msg, args...)
}

// NoRedirects is Grant.MaxRedirects that follows none.
const NoRedirects = setting.Off
