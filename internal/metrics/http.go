package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the collector's metrics (the Prometheus text format, or
// what the scraper negotiates).
func (c *Collector) Handler() http.Handler {
	return promhttp.HandlerFor(c.reg, promhttp.HandlerOpts{Registry: c.reg})
}

// Server is an HTTP server of a collector's /metrics.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Timeouts of the metrics listener: a client may take ReadHeaderTimeout to
// send a request's headers, and a keep-alive connection is closed after
// IdleTimeout without a request, so that idle scrapers (or anyone who
// opens connections and leaves them) cannot hold sockets and goroutines
// for good.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// ListenConfig configures Collector.ListenWith.
type ListenConfig struct {
	Addr  string       // host:port; port 0 picks one
	Ready func() error // /readyz; nil: always ready
	// ReadHeaderTimeout and IdleTimeout: 0 is the default above.
	ReadHeaderTimeout, IdleTimeout time.Duration
}

// Listen listens on addr (host:port; port 0 picks one) and serves, until
// Close, the collector's metrics at /metrics and the probes of process
// supervisors (systemd, Kubernetes):
//
//   - /healthz: 200 "ok" while the process serves HTTP at all (liveness);
//   - /readyz: 200 "ready" when ready returns nil, else 503 with its
//     error (readiness: a host is ready once its plugins are loaded, it
//     is connected and subscribed, and the broker acknowledges its
//     replies; not while it reconnects, stops, or its replies go
//     unacknowledged).
//
// A nil ready is always ready.
func (c *Collector) Listen(addr string, ready func() error) (*Server, error) {
	return c.ListenWith(ListenConfig{Addr: addr, Ready: ready})
}

// ListenWith is Listen with its timeouts chosen.
func (c *Collector) ListenWith(cfg ListenConfig) (*Server, error) {
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	ready := cfg.Ready
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", c.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil {
			if err := ready(); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the metrics' URL.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops the server, waiting until ctx is done for scrapes in flight.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
