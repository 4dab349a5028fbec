package cache

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// A Redis that is full (maxmemory reached, noeviction) is reported as
// full, naming maxmemory, not as unreachable: a claim fails with
// ErrStoreFull (an ErrStoreUnavailable: not run), the store is not taken
// for down, and a store started on it fails naming the setting. Once
// memory is there again, claims are taken at once.
func TestRedisFullSaysFull(t *testing.T) {
	r := testkit.StartRedis(t)
	s := newRedisDedup(t, r.URL, "full")
	defer s.Close()
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := testkit.RedisCLI(r.Addr, args...); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := s.Claim("inv", Key{"full", "resp"}, time.Now().Add(time.Minute), false)
	if !errors.Is(err, ErrStoreFull) || !errors.Is(err, ErrStoreUnavailable) || !strings.Contains(err.Error(), "raise maxmemory") || strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("a claim on a full Redis: %v; want ErrStoreFull naming maxmemory", err)
	}
	res := s.ClaimAll([]ClaimRequest{{Invoker: "inv", Key: Key{"full-batch", "resp"}, Expiry: time.Now().Add(time.Minute)}})[0]
	if !errors.Is(res.Err, ErrStoreFull) {
		t.Fatalf("ClaimAll on a full Redis: %v; want ErrStoreFull", res.Err)
	}
	if s.down.Load() {
		t.Error("a full Redis marked the store down: it answers")
	}
	if _, err := NewRedisDedup(RedisConfig[string]{URL: r.URL, Name: "full-start", OwnerGone: func(bool) string { return "" }}); err == nil ||
		!strings.Contains(err.Error(), "Redis is full") || !strings.Contains(err.Error(), "maxmemory") {
		t.Errorf("a store started on a full Redis: %v; want one naming maxmemory", err)
	}
	if _, err := testkit.RedisCLI(r.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if _, first, err := s.Claim("inv", Key{"room again", "resp"}, time.Now().Add(time.Minute), false); err != nil || !first {
		t.Errorf("a claim once Redis has room: first=%v %v", first, err)
	}
}

// rediss:// (or rediss+sentinel://) to a Redis without TLS says that the
// server does not speak TLS and how to fix it, not "context deadline
// exceeded" alone.
func TestRedissToPlainRedisSaysNoTLS(t *testing.T) {
	r := testkit.StartRedis(t)
	for _, url := range []string{"rediss://" + r.Addr + "/0", "rediss+sentinel://" + r.Addr + "/m"} {
		_, err := stringStore(url, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "does not speak TLS") || !strings.Contains(err.Error(), "use redis://") {
			t.Errorf("%s to a Redis without TLS: %v; want one saying it does not speak TLS", url, err)
		}
	}
	// A TLS Redis that does not answer is not taken for one without TLS.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	l.Close()
	_, err = stringStore("rediss://"+free+"/0", nil, nil)
	if err == nil || strings.Contains(err.Error(), "does not speak TLS") {
		t.Errorf("rediss:// to no server: %v", err)
	}
}

// A URL of a scheme no store takes names the schemes it takes, and the
// one it misspells.
func TestRedisSchemeNamesTheSchemes(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://h:6379", `scheme "http" is not one a store URL takes: redis, rediss, redis+sentinel`},
		{"redis-sentinel://h:26379/m", "did you mean redis+sentinel://?"},
		{"redis+cluster://h:7000", "did you mean redis-cluster://?"},
		{"REDISS://h:6380/0", "did you mean rediss://?"},
	} {
		if err := CheckRedisURL(c.url); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
	if err := CheckRedisURL("memcached://h:11211"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("memcached://: %v, want no guess", err)
	}
}
