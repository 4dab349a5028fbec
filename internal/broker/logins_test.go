package broker

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/crypto/bcrypt"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

// passwordFlood has n clients log in from src as user with a wrong
// password, each again as soon as it has its CONNACK, until stop or
// maxAttempts attempts in all. It returns a func that waits for them and
// returns the CONNACK codes they got, counted.
func passwordFlood(src, addr, user string, n int, maxAttempts int64, stop <-chan struct{}) (wait func() map[byte]int) {
	var attempts atomic.Int64
	var mu sync.Mutex
	codes := map[byte]int{}
	var wg sync.WaitGroup
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	var connect bytes.Buffer
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 5,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, ClientIdentifier: "guess", Keepalive: 60,
			UsernameFlag: true, Username: []byte(user), PasswordFlag: true, Password: []byte("guess")}}
	if err := pk.ConnectEncode(&connect); err != nil {
		panic(err)
	}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ack := make([]byte, 256)
			for attempts.Add(1) <= maxAttempts {
				select {
				case <-stop:
					return
				default:
				}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue
				}
				_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang guard
				code := byte(0xFF)                                  // no CONNACK
				if _, err := c.Write(connect.Bytes()); err == nil {
					if k, err := c.Read(ack); err == nil && k >= 4 && ack[0] == 0x20 {
						code = ack[3]
					}
				}
				_ = c.Close()
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	return func() map[byte]int { wg.Wait(); return codes }
}

// The password checks take turns fairly across sources: eight sources
// sending wrong passwords as fast as their CONNACKs come (two clients
// each) have at most one login waiting each, behind the logins of sources
// that failed none, and a correct login from another source gets in,
// every time, after the check running: counted in checks, it waits for
// none but its own however slow the machine (TestLoginQueueOrder shows
// the order). Before, a login that found the one check slot taken was
// refused busy, and nearly every correct login got 0x89. (The sources
// are not throttled here: this is the queue alone.)
func TestLoginTurnsFairAcrossSources(t *testing.T) {
	const sources = 8
	users := []string{"alice", "alice-pw"}
	for i := range 10 {
		users = append(users, "user"+itoa(i), "pw"+itoa(i))
	}
	e, _ := startWith(t, Config{UsersFile: usersFileCost(t, 6, users...)})
	e.guard.throttle.mu.Lock()
	e.guard.throttle.after = 1 << 30
	e.guard.throttle.mu.Unlock()
	client := src("127.0.0.20")
	var mu sync.Mutex
	var waited []uint64 // checks begun while the client's logins waited
	q := e.guard.checks
	q.mu.Lock()
	q.served = func(from netip.Prefix, checks uint64) {
		if from == client {
			mu.Lock()
			waited = append(waited, checks)
			mu.Unlock()
		}
	}
	q.mu.Unlock()
	stop := make(chan struct{})
	var waits []func() map[byte]int
	for i := range sources {
		waits = append(waits, passwordFlood("127.0.0."+itoa(2+i), e.Addr(), "alice", 2, 100_000, stop))
	}
	var refused map[byte]int
	defer func() {
		close(stop)
		refused = map[byte]int{}
		for _, w := range waits {
			for code, n := range w() {
				refused[code] += n
			}
		}
		t.Logf("the flood's CONNACKs: %v; the client's logins waited for %v checks", refused, waited)
	}()
	waitFailed(t, e, sources)
	for i := range 10 { // each a first login: no check skipped
		loginWithin(t, "127.0.0.20", e.Addr(), "user-"+itoa(i), "user"+itoa(i), "pw"+itoa(i), loginLimit(), 0, nil)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range waited {
		if n > 1 {
			t.Errorf("a login of the client (%d of %d that waited) waited for %d checks, want its own only", i+1, len(waited), n)
		}
	}
	if got := e.Stats().LoginsThrottled; got != 0 {
		t.Errorf("%d logins throttled with the throttle off", got)
	}
}

// waitFailed waits until each of the n guessing sources from 127.0.0.2
// on has failed two logins: from then on their logins wait behind those
// of sources that failed none. (Until then a login may also wait for one
// check of each that was queued before its source's first failure:
// TestLoginQueueOrder.)
func waitFailed(t *testing.T, e *Embedded, n int) {
	t.Helper()
	testkit.WaitFor(t, "each guesser to fail twice", func() bool {
		for i := range n {
			if _, _, failures := e.guard.throttle.check(src("127.0.0."+itoa(2+i)), "", time.Now()); failures < 2 {
				return false
			}
		}
		return true
	})
}

// A login waits for the checks running and at most one check of each
// other source waiting: at most one login waits per source (another is
// refused busy at once), and they are served in the order they came,
// those from sources that failed no login of late before the others (a
// guesser's sources have all failed).
func TestLoginQueueOrder(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	q := newLoginQueue(clk)
	q.slots, q.maxWaiting = 1, 64
	busy, _ := q.turn(src("192.0.2.100"), false) // the one slot, taken
	type served struct {
		src     string
		release func()
		why     string
	}
	order := make(chan served, 16)
	wait := func(from string, failed bool) {
		go func() {
			release, why := q.turn(src(from), failed)
			order <- served{from, release, why}
		}()
		testkit.WaitFor(t, from+" in the queue", func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.waiting[src(from)]
		})
	}
	for i := range 4 {
		wait("192.0.2."+itoa(i+1), true) // guessers
	}
	wait("198.51.100.1", false) // a client
	for i := 4; i < 8; i++ {
		wait("192.0.2."+itoa(i+1), true)
	}
	wait("198.51.100.2", false)
	if release, why := q.turn(src("192.0.2.1"), true); release != nil || why != whySourceWaiting {
		t.Fatalf("a second login from a source with one waiting: %v, want refused %q", why, whySourceWaiting)
	}
	busy()
	want := []string{"198.51.100.1", "198.51.100.2"}
	for i := range 8 {
		want = append(want, "192.0.2."+itoa(i+1))
	}
	for i, w := range want {
		s := <-order
		if s.release == nil {
			t.Fatalf("turn %d refused: %s", i, s.why)
		}
		if s.src != w {
			t.Fatalf("turn %d went to %s, want %s", i, s.src, w)
		}
		s.release()
	}
	if got := q.started.Load(); got != 11 {
		t.Errorf("%d checks begun, want 11", got)
	}
	// A login whose turn does not come within loginWait is refused, and
	// leaves the queue.
	busy, _ = q.turn(src("192.0.2.100"), false)
	go func() {
		release, why := q.turn(src("192.0.2.1"), true)
		order <- served{"192.0.2.1", release, why}
	}()
	clk.WaitTimers(t, 1) // its wait, the others' stopped
	clk.Add(loginWait)
	if s := <-order; s.release != nil || s.why != "waited 5s for a credentials check" {
		t.Errorf("a login past loginWait: %q", s.why)
	}
	busy()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waitingLen() != 0 || len(q.waiting) != 0 || q.running != 0 {
		t.Errorf("after: %d waiting, %d sources, %d running; want none", q.waitingLen(), len(q.waiting), q.running)
	}
}

// A login that passed skips the check the next time, until the users
// file changes; a wrong password is checked each time.
func TestVerifiedLoginSkipsTheCheck(t *testing.T) {
	path := usersFileCost(t, bcrypt.MinCost, "alice", "alice-pw")
	e, _ := startWith(t, Config{UsersFile: path})
	q := e.guard.checks
	login := func(password string, wantCode byte, wantChecks uint64) {
		t.Helper()
		before := q.started.Load()
		if ack := dialRaw(t, e.Addr()).connectAs(t, "alice-1", "alice", password); ack.ReasonCode != wantCode {
			t.Fatalf("alice with %q: CONNACK 0x%02x, want 0x%02x", password, ack.ReasonCode, wantCode)
		}
		if got := q.started.Load() - before; got != wantChecks {
			t.Errorf("alice with %q: %d checks, want %d", password, got, wantChecks)
		}
	}
	login("alice-pw", 0, 1)
	login("alice-pw", 0, 0)
	login("not-alice-pw", packets.ErrBadUsernameOrPassword.Code, 1)
	login("not-alice-pw", packets.ErrBadUsernameOrPassword.Code, 1)
	writeUsers(t, path, bcrypt.MinCost, "alice", "new-pw")
	login("alice-pw", packets.ErrBadUsernameOrPassword.Code, 1) // the file changed: checked, and wrong now
	login("new-pw", 0, 1)
	login("new-pw", 0, 0)
}

// The cache of good logins keeps at most its bound, and an entry holds
// for its version of the users file and verifiedTTL only.
func TestVerifiedLoginsBounded(t *testing.T) {
	v := newVerifiedLogins(3)
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		v.add("u"+itoa(i), "pw", 1, now.Add(time.Duration(i)*time.Second))
	}
	if len(v.entries) != 3 {
		t.Errorf("%d entries, want the bound 3", len(v.entries))
	}
	if v.has("u0", "pw", 1, now) || !v.has("u4", "pw", 1, now) {
		t.Errorf("the oldest entry kept, or the newest dropped")
	}
	if v.has("u4", "pw", 2, now) {
		t.Errorf("an entry held for another version of the users file")
	}
	if v.has("u4", "pw", 1, now.Add(4*time.Second+verifiedTTL)) {
		t.Errorf("an entry held after verifiedTTL")
	}
	if v.has("u4", "other", 1, now) || v.has("u", "4:pw", 1, now) {
		t.Errorf("another password, or the same text split elsewhere, found")
	}
}

// At the broker: an address that sent throttleAfter wrong passwords gets
// 0x9F for its next password logins, without a check, logged at most one
// a second; a user who logged in before from there, under another name,
// still gets in; another address is not touched; when the block ends a
// login from there is checked again, and a wrong one blocks it twice as
// long. The wrong passwords are logged each while they are few.
func TestPasswordThrottleAtTheBroker(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	e, logs := startWith(t, Config{UsersFile: usersFileCost(t, bcrypt.MinCost, "alice", "alice-pw", "bob", "bob-pw"), Clock: clk})
	q := e.guard.checks
	login := func(from, user, password string, wantCode byte, wantChecks uint64) {
		t.Helper()
		before := q.started.Load()
		ack, err := dialFrom(t, from, e.Addr()).tryLogin(t, user+"-x", user, password)
		if err != nil || ack.ReasonCode != wantCode {
			t.Fatalf("%s from %s: CONNACK 0x%02x, %v; want 0x%02x", user, from, ack.ReasonCode, err, wantCode)
		}
		if got := q.started.Load() - before; got != wantChecks {
			t.Errorf("%s from %s: %d checks, want %d", user, from, got, wantChecks)
		}
	}
	const badPassword, rateExceeded = 0x86, 0x9F
	login("127.0.0.2", "bob", "bob-pw", 0, 1) // bob logged in before, from there
	for range throttleAfter {
		login("127.0.0.2", "alice", "guess", badPassword, 1)
	}
	if n := strings.Count(logs.String(), "unknown user or wrong password"); n != throttleAfter {
		t.Errorf("%d wrong passwords logged of %d, want each (they are few)", n, throttleAfter)
	}
	for range 10 {
		login("127.0.0.2", "alice", "guess", rateExceeded, 0)
	}
	login("127.0.0.2", "alice", "alice-pw", rateExceeded, 0) // the right one too: nothing is checked
	login("127.0.0.2", "bob", "bob-pw", 0, 0)                // known good, a name that did not fail there
	login("127.0.0.3", "alice", "alice-pw", 0, 1)            // another address
	if got := e.Stats().LoginsThrottled; got != 11 {
		t.Errorf("LoginsThrottled %d, want 11", got)
	}
	if !logs.Contains("logins throttled") || !logs.Contains("source=127.0.0.2/32") || !logs.Contains("blocked_for=1s") {
		t.Errorf("the block is not logged with its address and length:\n%s", logs)
	}
	if n := strings.Count(logs.String(), "its password logins are refused without a check for"); n > 2 {
		t.Errorf("%d lines for 11 logins refused within a second, want at most 2 (one a second)", n)
	}
	if logs.Contains("alice-pw") || logs.Contains("guess") {
		t.Errorf("a password is in the log:\n%s", logs)
	}
	clk.Add(throttleFirst)
	login("127.0.0.2", "alice", "guess", badPassword, 1) // checked again, and blocks for 2 s
	clk.Add(throttleFirst)
	login("127.0.0.2", "alice", "alice-pw", rateExceeded, 0)
	clk.Add(throttleFirst)
	login("127.0.0.2", "alice", "alice-pw", 0, 0) // the block over: in, known good (from 127.0.0.3)
}
