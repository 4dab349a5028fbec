package testkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisSentinel is a Redis primary, its replica and three Sentinels
// (quorum 2) of a test's own on free loopback ports, killed when the
// test ends. The Sentinels take the primary for down after
// SentinelDownAfter.
type RedisSentinel struct {
	// URL is redis+sentinel://S1,S2,S3/MASTER/0 (the store's form).
	URL     string
	Master  string
	Primary *Redis
	Replica *Redis
	// SentinelAddrs are the Sentinels' addresses.
	SentinelAddrs []string
}

// SentinelDownAfter is how long the Sentinels of StartRedisSentinel wait
// before they take a primary that does not answer for down.
const SentinelDownAfter = time.Second

// StartRedisSentinel starts a primary, a replica of it and three
// Sentinels monitoring it, and waits until the replica is in sync and
// the Sentinels know it (a failover can promote it).
func StartRedisSentinel(tb testing.TB) *RedisSentinel {
	tb.Helper()
	Needs(tb, RedisServer)
	const master = "cmdhost"
	// A replica syncs at once (no diskless sync delay). DEBUG SLEEP
	// stalls either.
	primary := startRedis(tb, "", RedisOptions{Debug: true, extra: []string{"--repl-diskless-sync-delay", "0"}})
	host, pport, _ := net.SplitHostPort(primary.Addr)
	replica := startRedis(tb, "", RedisOptions{Debug: true, extra: []string{"--replicaof", host, pport, "--repl-diskless-sync-delay", "0"}})
	// The restarted primary comes back as a primary, as a restarted
	// process does: the Sentinels make it a replica.
	rs := &RedisSentinel{Master: master, Primary: primary, Replica: replica}
	for range 3 {
		addr := freeAddr(tb)
		_, port, _ := net.SplitHostPort(addr)
		dir := tb.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("bind 127.0.0.1\nport %s\ndir %s\nsentinel monitor %s %s %s 2\n"+
			"sentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 4000\nsentinel parallel-syncs %s 1\n",
			port, dir, master, host, pport, master, SentinelDownAfter.Milliseconds(), master, master)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
		cmd := startProcess(tb, addr, "redis-server", conf, "--sentinel")
		tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		rs.SentinelAddrs = append(rs.SentinelAddrs, addr)
	}
	rs.URL = "redis+sentinel://" + strings.Join(rs.SentinelAddrs, ",") + "/" + master + "/0"
	for deadline := time.Now().Add(Patience()); ; { // hang guard
		info, _ := RedisCLI(primary.Addr, "INFO", "replication")
		ok := strings.Contains(info, "state=online") // the replica in sync
		for _, s := range rs.SentinelAddrs {
			out, _ := RedisCLI(s, "SENTINEL", "REPLICAS", master)
			ok = ok && strings.Contains(out, replica.Addr[strings.LastIndex(replica.Addr, ":")+1:])
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatal("the replica is not in sync, or the Sentinels do not know it")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return rs
}

// MasterAddr is the address of the primary the first Sentinel names
// now.
func (rs *RedisSentinel) MasterAddr() string { return rs.masterBy(rs.SentinelAddrs[0]) }

// Agreed reports whether every Sentinel names addr as the primary: a
// failover is over.
func (rs *RedisSentinel) Agreed(addr string) bool {
	for _, s := range rs.SentinelAddrs {
		if rs.masterBy(s) != addr {
			return false
		}
	}
	return true
}

func (rs *RedisSentinel) masterBy(sentinel string) string {
	out, err := RedisCLI(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", rs.Master)
	if err != nil {
		return ""
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return ""
	}
	return net.JoinHostPort(f[0], f[1])
}

// RedisCluster is a Redis Cluster of masters (no replicas) of a test's
// own on free loopback ports, killed when the test ends.
type RedisCluster struct {
	// URL is redis-cluster://N1,N2,… (the store's form), or
	// rediss-cluster:// over TLS.
	URL   string
	Nodes []*Redis
	opts  RedisOptions
}

// StartRedisCluster starts n cluster-enabled Redis servers, makes them
// one cluster (redis-cli --cluster create), and waits until every node
// says the cluster is ok.
func StartRedisCluster(tb testing.TB, n int) *RedisCluster {
	tb.Helper()
	return StartSecureRedisCluster(tb, n, RedisOptions{})
}

// StartSecureRedisCluster is StartRedisCluster with every node secured
// as opts says (over TLS: the cluster bus too, tls-cluster yes).
func StartSecureRedisCluster(tb testing.TB, n int, opts RedisOptions) *RedisCluster {
	tb.Helper()
	Needs(tb, RedisServer)
	if _, err := exec.LookPath("redis-cli"); err != nil {
		tb.Fatal("redis-cli is not installed: run .ci/deps")
	}
	rc := &RedisCluster{opts: opts}
	scheme := "redis-cluster://"
	if opts.TLS != nil {
		scheme = "rediss-cluster://"
	}
	var addrs []string
	for range n {
		dir := tb.TempDir()
		addr := freeClusterAddr(tb)
		o := opts
		o.extra = append(append([]string(nil), opts.extra...), "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--cluster-node-timeout", "2000", "--dir", dir)
		if opts.TLS != nil {
			// The nodes' bus connections present a client certificate of
			// their own (the server's is for server authentication only).
			cert, key := opts.TLS.Client(tb, "redis-node")
			o.extra = append(o.extra, "--tls-cluster", "yes", "--tls-client-cert-file", cert, "--tls-client-key-file", key)
		}
		r := &Redis{URL: "redis://" + addr + "/0", Addr: addr, opts: o}
		r.cmd = runRedis(tb, addr, "", r.opts)
		tb.Cleanup(r.Kill)
		rc.Nodes = append(rc.Nodes, r)
		addrs = append(addrs, addr)
	}
	args := append(append(rc.cliTLS(), "--cluster", "create"), addrs...)
	if out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(Patience()); ; { // hang guard
		ok := true
		for _, a := range addrs {
			out, _ := rc.CLI(a, "CLUSTER", "INFO")
			ok = ok && strings.Contains(out, "cluster_state:ok")
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatal("the cluster is not ok")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rc.URL = scheme + strings.Join(addrs, ",")
	return rc
}

// cliTLS are redis-cli's arguments to reach the nodes.
func (rc *RedisCluster) cliTLS() []string {
	if rc.opts.TLS == nil {
		return nil
	}
	return []string{"--tls", "--cacert", rc.opts.TLS.CAFile}
}

// CLI is RedisCLI for a node of the cluster (over TLS when it speaks it).
func (rc *RedisCluster) CLI(addr string, args ...string) (string, error) {
	return RedisCLI(addr, append(rc.cliTLS(), args...)...)
}

// NodeID is the cluster id of node i.
func (rc *RedisCluster) NodeID(tb testing.TB, i int) string {
	tb.Helper()
	out, err := rc.CLI(rc.Nodes[i].Addr, "CLUSTER", "MYID")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// Reshard moves slots slots from node from to node to with redis-cli
// --cluster reshard, live; it returns when the move is done.
func (rc *RedisCluster) Reshard(tb testing.TB, from, to, slots int) error {
	tb.Helper()
	out, err := exec.Command("redis-cli", append(rc.cliTLS(), "--cluster", "reshard", rc.Nodes[0].Addr,
		"--cluster-from", rc.NodeID(tb, from), "--cluster-to", rc.NodeID(tb, to),
		"--cluster-slots", strconv.Itoa(slots), "--cluster-yes", "--cluster-pipeline", "100")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster reshard: %w\n%s", err, out)
	}
	return nil
}

// Keys is how many keys node i holds.
func (rc *RedisCluster) Keys(tb testing.TB, i int) int {
	tb.Helper()
	out, err := rc.CLI(rc.Nodes[i].Addr, "DBSIZE")
	if err != nil {
		tb.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n
}

// RedisCLI runs one command with redis-cli against addr and returns its
// output; args may begin with redis-cli's own options (--tls …).
func RedisCLI(addr string, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	return string(out), err
}

// freeAddr is a free loopback address.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// freeClusterAddr is a free loopback address whose port + 10000 (the
// cluster bus) is free too.
func freeClusterAddr(tb testing.TB) string {
	tb.Helper()
	for range 100 {
		addr := freeAddr(tb)
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		if port+10000 > 65535 {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			_ = l.Close()
			return addr
		}
	}
	tb.Fatal("no free port with a free cluster bus port")
	return ""
}

// startProcess starts name with args and waits until addr answers PING.
func startProcess(tb testing.TB, addr, name string, args ...string) *exec.Cmd {
	tb.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; { // hang guard
		if got, err := RedisCLI(addr, "PING"); err == nil && strings.TrimSpace(got) == "PONG" {
			return cmd
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			tb.Fatalf("%s on %s did not start: %s", name, addr, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
