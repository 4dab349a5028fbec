package testkit

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Redis is a redis-server of a test's own on a free loopback port,
// killed when the test ends. .ci/deps installs redis-server; under -short
// (make unit) a test that starts one skips.
type Redis struct {
	// URL is redis://ADDR/0, or rediss://ADDR/0 over TLS; it names no
	// user.
	URL  string
	Addr string
	dir  string // its append-only file's folder; "": no persistence
	opts RedisOptions
	cmd  *exec.Cmd
}

// RedisOptions secure a test's Redis.
type RedisOptions struct {
	// TLS, when set, makes Redis speak TLS only, with a server
	// certificate of this CA for 127.0.0.1; a client certificate of it is
	// optional unless RequireClientCert.
	TLS               *PKI
	RequireClientCert bool
	// Users are ACL users, name to password, each allowed every command
	// on the keys cmdhost:* (the stores' keys, docs/operations.md); with
	// any, the default user is off (a client must log in).
	Users map[string]string
	// Debug allows the DEBUG command (DEBUG SLEEP stalls Redis).
	Debug bool
	// extra are more arguments of redis-server (redisha.go).
	extra []string
}

// StartRedis starts a Redis without persistence.
func StartRedis(tb testing.TB) *Redis {
	tb.Helper()
	return startRedis(tb, "", RedisOptions{})
}

// StartSecureRedis starts a Redis without persistence, secured as opts
// says.
func StartSecureRedis(tb testing.TB, opts RedisOptions) *Redis {
	tb.Helper()
	return startRedis(tb, "", opts)
}

// StartPersistentRedis starts a Redis that writes every change to its
// append-only file before answering (appendfsync always): a Restart after
// a Kill keeps everything.
func StartPersistentRedis(tb testing.TB) *Redis {
	tb.Helper()
	return startRedis(tb, tb.TempDir(), RedisOptions{})
}

// Kill kills the server (kill -9): what it held is lost.
func (r *Redis) Kill() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// Restart starts the server again on the same address: empty, or with
// what it had written when it is persistent.
func (r *Redis) Restart(tb testing.TB) {
	tb.Helper()
	r.Kill()
	r.cmd = runRedis(tb, r.Addr, r.dir, r.opts)
}

// RestartAsReplicaOf starts the server again on the same address as a
// replica of primary (HOST:PORT), as an operator brings back a primary
// that a Sentinel failover replaced: a primary that lost its data on the
// way (no persistence) must not come back as a primary, even for a
// moment, since a Sentinel may promote it again (seen on a busy machine:
// a second failover to the empty one, and what it held run again).
func (r *Redis) RestartAsReplicaOf(tb testing.TB, primary string) {
	tb.Helper()
	r.Kill()
	host, port, _ := net.SplitHostPort(primary)
	opts := r.opts
	opts.extra = append(append([]string{}, opts.extra...), "--replicaof", host, port)
	r.cmd = runRedis(tb, r.Addr, r.dir, opts)
}

func startRedis(tb testing.TB, dir string, opts RedisOptions) *Redis {
	tb.Helper()
	Needs(tb, RedisServer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	scheme := "redis://"
	if opts.TLS != nil {
		scheme = "rediss://"
	}
	r := &Redis{URL: scheme + addr + "/0", Addr: addr, dir: dir, opts: opts, cmd: runRedis(tb, addr, dir, opts)}
	tb.Cleanup(r.Kill)
	return r
}

// runRedis starts redis-server on addr, persistent in dir unless it is
// "", secured as opts says, and waits until it answers PING (an answer
// that asks to log in counts).
func runRedis(tb testing.TB, addr, dir string, opts RedisOptions) *exec.Cmd {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatal("redis-server is not installed: run .ci/deps")
	}
	host, port, _ := net.SplitHostPort(addr)
	var out bytes.Buffer
	// Its own folder even without persistence: a replica's full sync
	// writes an RDB file there (else in the test's package folder).
	args := []string{"--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", tb.TempDir()}
	if dir != "" {
		args = []string{"--bind", host, "--port", port, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir}
	}
	args = append(args, opts.args(tb, port)...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; { // hang guard
		if c, err := opts.dial(addr); err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if got := string(buf[:n]); got == "+PONG\r\n" || got == "-NOAUTH" {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			tb.Fatalf("redis-server on %s did not start: %s", addr, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RedisAnswers reports whether the Redis at addr (without TLS) answers
// PING within d: not while it stalls (DEBUG SLEEP) or is down.
func RedisAnswers(addr string, d time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "+PONG\r\n"
}

// args are redis-server's arguments for opts, on port.
func (o RedisOptions) args(tb testing.TB, port string) []string {
	tb.Helper()
	var args []string
	if o.Debug {
		args = append(args, "--enable-debug-command", "local")
	}
	if o.TLS != nil {
		cert, key := o.TLS.Server(tb, "redis")
		auth := "optional"
		if o.RequireClientCert {
			auth = "yes"
			o.TLS.Client(tb, "redis-probe") // for dial's readiness probe
		}
		args = append(args, "--port", "0", "--tls-port", port, "--tls-cert-file", cert, "--tls-key-file", key,
			"--tls-ca-cert-file", o.TLS.CAFile, "--tls-auth-clients", auth)
	}
	if len(o.Users) > 0 {
		// One token an argument: redis-server quotes an argument with a
		// space in it.
		args = append(args, "--user", "default", "off")
		for name, pw := range o.Users {
			args = append(args, "--user", name, "on", ">"+pw, "~cmdhost:*", "+@all")
		}
	}
	return append(args, o.extra...) // last: they override the above
}

// dial connects to the Redis at addr as a client of opts: over TLS with
// a client certificate when it speaks TLS.
func (o RedisOptions) dial(addr string) (net.Conn, error) {
	if o.TLS == nil {
		return net.Dial("tcp", addr)
	}
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(o.TLS.CAFile)
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if o.RequireClientCert {
		cert, err := tls.LoadX509KeyPair(filepath.Join(o.TLS.Dir, "redis-probe.pem"), filepath.Join(o.TLS.Dir, "redis-probe-key.pem"))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, cfg)
}
