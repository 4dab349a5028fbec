package testkit

import (
	"bytes"
	"net"
	"os/exec"
	"testing"
	"time"
)

// Redis is a redis-server of a test's own on a free loopback port,
// killed when the test ends. .ci/deps installs redis-server; under -short
// (make unit) a test that starts one skips.
type Redis struct {
	// URL is redis://ADDR/0.
	URL  string
	Addr string
	dir  string // its append-only file's folder; "": no persistence
	cmd  *exec.Cmd
}

// StartRedis starts a Redis without persistence.
func StartRedis(tb testing.TB) *Redis {
	tb.Helper()
	return startRedis(tb, "")
}

// StartPersistentRedis starts a Redis that writes every change to its
// append-only file before answering (appendfsync always): a Restart after
// a Kill keeps everything.
func StartPersistentRedis(tb testing.TB) *Redis {
	tb.Helper()
	return startRedis(tb, tb.TempDir())
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
	r.cmd = runRedis(tb, r.Addr, r.dir)
}

func startRedis(tb testing.TB, dir string) *Redis {
	tb.Helper()
	Needs(tb, RedisServer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	r := &Redis{URL: "redis://" + addr + "/0", Addr: addr, dir: dir, cmd: runRedis(tb, addr, dir)}
	tb.Cleanup(r.Kill)
	return r
}

// runRedis starts redis-server on addr, persistent in dir unless it is
// "", and waits until it answers PING.
func runRedis(tb testing.TB, addr, dir string) *exec.Cmd {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatal("redis-server is not installed: run .ci/deps")
	}
	host, port, _ := net.SplitHostPort(addr)
	var out bytes.Buffer
	args := []string{"--bind", host, "--port", port, "--save", "", "--appendonly", "no"}
	if dir != "" {
		args = []string{"--bind", host, "--port", port, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; { // hang guard
		if c, err := net.Dial("tcp", addr); err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
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
