// Package brokertest starts MQTT brokers for tests: the system's mosquitto
// (the broker cmdhost is measured against) or cmdhost's embedded mochi
// broker. Each broker listens on a free 127.0.0.1 port and is stopped when
// the test ends; neither ever uses 1883, where a developer's own broker may run.
package brokertest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/broker"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// MissingMosquitto is the failure message when no mosquitto binary is found.
const MissingMosquitto = "mosquitto not found: run .ci/deps (installs Debian's mosquitto)"

// How long mosquitto gets to accept connections, and to exit on SIGTERM.
const (
	startTimeout = 10 * time.Second
	stopTimeout  = 5 * time.Second
)

// StartEmbedded starts cmdhost's embedded broker (package broker) on a free
// 127.0.0.1 port, closes it when the test ends, and returns its URL.
func StartEmbedded(t testing.TB) *url.URL {
	t.Helper()
	e, err := broker.Start(broker.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("embedded broker: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("embedded broker: close: %v", err)
		}
	})
	return e.URL()
}

// StartMosquitto runs the system's mosquitto on a free 127.0.0.1 port with a
// config tuned for request/response (see mosquittoConf), waits until the
// port accepts connections, stops it when the test ends, and returns its URL.
// The config and mosquitto's log are in a t.TempDir(); the log is printed
// when the test fails. Under -short (make unit) the test skips: it needs
// mosquitto installed.
func StartMosquitto(t testing.TB) *url.URL {
	t.Helper()
	return StartMosquittoWith(t, MosquittoOptions{})
}

// MosquittoOptions secure a mosquitto of StartMosquittoWith; the zero
// options are StartMosquitto's anonymous plain-TCP broker.
type MosquittoOptions struct {
	// PasswordFile is a mosquitto password file (WritePasswordFile):
	// with it, only its users may connect (allow_anonymous false).
	PasswordFile string
	// CertFile and KeyFile make the listener TLS (mqtts://) with this
	// server certificate (CA.Server).
	CertFile, KeyFile string
	// CAFile is the CA of the client certificates; with
	// RequireCertificate, a client without one it signed is refused
	// (mTLS), and the certificate's common name is the client's user
	// name (use_identity_as_username) unless PasswordFile is set.
	CAFile             string
	RequireCertificate bool
	// ACLFile is a mosquitto acl_file: which user may read and write
	// which topics.
	ACLFile string
	// Listener is the listener's settings as mosquitto.conf lines (a
	// recipe's, from the docs), written after the listener line in place
	// of those the options above make: with it, the other options are
	// ignored. A "certfile" line makes the URL mqtts://.
	Listener string
	// Tail is more mosquitto.conf lines, written last: a bridge's
	// connection section (connection, address, topic...).
	Tail string
}

// StartMosquittoWith is StartMosquitto with opts: a password file, a TLS
// listener, client certificates, an ACL. Its URL is mqtts:// with TLS.
func StartMosquittoWith(t testing.TB, opts MosquittoOptions) *url.URL {
	t.Helper()
	u, _ := StartKillableMosquitto(t, opts)
	return u
}

// StartKillableMosquitto is StartMosquittoWith that also returns kill,
// which stops the broker with SIGKILL (kill -9: no goodbye to its
// clients, no bridge or session state saved) and returns once it exited.
func StartKillableMosquitto(t testing.TB, opts MosquittoOptions) (u *url.URL, kill func()) {
	t.Helper()
	testkit.Needs(t, testkit.Mosquitto)
	bin, err := findMosquitto()
	if err != nil {
		t.Fatal(MissingMosquitto)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "mosquitto.log")
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("mosquitto log (%s):\n%s", logPath, b)
			}
		}
	})

	// The free port is found by listening on port 0 and closing again, so
	// another process may take it before mosquitto binds: retry a few times.
	var lastErr error
	for range 3 {
		u, kill, err := startMosquitto(t, bin, dir, logPath, opts)
		if err == nil {
			return u, kill
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("mosquitto: %v", lastErr)
	return nil, nil
}

var errPortTaken = errors.New("port taken before mosquitto could bind it")

func findMosquitto() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	// Debian installs it in /usr/sbin, which a non-root PATH often lacks.
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func freePort() (int, error) {
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port != 1883 { // never the default MQTT port: a real broker may live there
			return port, nil
		}
	}
	return 0, errors.New("no free port")
}

// mosquittoConf is the broker's configuration. Each line is deliberate:
//   - listener PORT 127.0.0.1: loopback only, never the default 1883;
//   - allow_anonymous true: mosquitto 2 refuses unauthenticated clients by default;
//   - set_tcp_nodelay true: with Nagle on (the default) a request/response
//     round trip with one in flight takes ~44 ms instead of ~0.25 ms;
//   - max_inflight_messages 0: no cap on QoS 1 messages in flight to a client
//     (the default 20 throttles every subscriber);
//   - max_queued_messages 1000000: the default 1000 drops QoS 1 messages
//     queued for a busy or briefly disconnected client;
//   - persistence false: each test starts from nothing and leaves nothing;
//   - log to a file in the test's directory (printed if the test fails).
//
// The options add, to that listener: password_file (and no anonymous
// clients), certfile/keyfile (TLS), cafile and require_certificate (mTLS),
// use_identity_as_username (a certificate is a user without a password
// file), acl_file; or opts.Listener replaces them all.
func mosquittoConf(port int, logPath string, opts MosquittoOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listener %d 127.0.0.1\n", port)
	if opts.Listener != "" {
		b.WriteString(strings.TrimSuffix(opts.Listener, "\n") + "\n")
		tuning(&b, logPath)
		b.WriteString(opts.Tail)
		return b.String()
	}
	if opts.CertFile != "" {
		fmt.Fprintf(&b, "certfile %s\nkeyfile %s\n", opts.CertFile, opts.KeyFile)
	}
	if opts.CAFile != "" {
		fmt.Fprintf(&b, "cafile %s\n", opts.CAFile)
	}
	if opts.RequireCertificate {
		b.WriteString("require_certificate true\n")
		if opts.PasswordFile == "" {
			b.WriteString("use_identity_as_username true\n")
		}
	}
	if opts.PasswordFile != "" {
		fmt.Fprintf(&b, "password_file %s\n", opts.PasswordFile)
	}
	if opts.ACLFile != "" {
		fmt.Fprintf(&b, "acl_file %s\n", opts.ACLFile)
	}
	secured := opts.PasswordFile != "" || opts.RequireCertificate
	fmt.Fprintf(&b, "allow_anonymous %t\n", !secured)
	tuning(&b, logPath)
	b.WriteString(opts.Tail)
	return b.String()
}

// tuning writes the lines of every test broker's configuration: the
// performance settings, no persistence, and the log.
func tuning(b *strings.Builder, logPath string) {
	b.WriteString("set_tcp_nodelay true\n")
	b.WriteString("max_inflight_messages 0\n")
	b.WriteString("max_queued_messages 1000000\n")
	b.WriteString("persistence false\n")
	fmt.Fprintf(b, "log_dest file %s\n", logPath)
	b.WriteString("log_type error\nlog_type warning\nlog_type notice\nlog_type information\n")
	if os.Geteuid() == 0 {
		// Run as root, mosquitto drops to user "mosquitto", which cannot write
		// the log in the test's private temporary directory.
		b.WriteString("user root\n")
	}
}

func startMosquitto(t testing.TB, bin, dir, logPath string, opts MosquittoOptions) (*url.URL, func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(logPath) // a fresh log per attempt
	confPath := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(confPath, []byte(mosquittoConf(port, logPath, opts)), 0o644); err != nil {
		return nil, nil, err
	}
	out, err := os.Create(filepath.Join(dir, "mosquitto.out"))
	if err != nil {
		return nil, nil, err
	}
	defer out.Close()

	cmd := exec.Command(bin, "-c", confPath)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	// exited is closed when mosquitto has exited, by whatever means
	// (SIGTERM at the end, kill, a crash): waitAccepting, kill and stop
	// all wait on it.
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitAccepting(addr, exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		msg := readTail(logPath) + readTail(filepath.Join(dir, "mosquitto.out"))
		if strings.Contains(msg, "Address already in use") {
			return nil, nil, fmt.Errorf("%w: %s", errPortTaken, addr)
		}
		return nil, nil, fmt.Errorf("%v\n%s", err, msg)
	}
	t.Cleanup(func() { stop(t, cmd, exited) })
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	if opts.CertFile != "" || opts.Listener != "" && regexp.MustCompile(`(?m)^\s*certfile\s`).MatchString(opts.Listener) {
		return &url.URL{Scheme: "mqtts", Host: addr}, kill, nil
	}
	return &url.URL{Scheme: "mqtt", Host: addr}, kill, nil
}

// waitAccepting polls addr until a TCP connection succeeds (mosquitto is
// then serving), mosquitto exits, or startTimeout passes.
func waitAccepting(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections on %s after %v: %v", addr, startTimeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before accepting connections on %s", addr)
		case <-tick.C:
		}
	}
}

func stop(t testing.TB, cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited: // killed already
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		t.Errorf("mosquitto (pid %d) ignored SIGTERM for %v; killing it", cmd.Process.Pid, stopTimeout)
		_ = cmd.Process.Kill()
		<-exited
	}
}

func readTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	const max = 4096
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
