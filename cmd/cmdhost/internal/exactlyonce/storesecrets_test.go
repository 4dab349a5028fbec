package exactlyonce

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/redis/go-redis/v9"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The secrets of this test: none may appear in any output.
const (
	storePassword     = "Store-PW-7f3a"
	urlBrokerPassword = "Broker-PW-5d2b"
	testAdminToken    = "Admin-Tok-9c1e"
)

func noSecrets(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{storePassword, urlBrokerPassword, testAdminToken, "PW-WRONG"} {
		if strings.Contains(out, s) {
			t.Errorf("%s shows a secret (%s):\n%s", what, s, out)
		}
	}
}

func writeSecret(t *testing.T, name, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serve --store rediss://USER@… with a private CA, a client certificate
// and the ACL user's password from a file: requests are deduplicated
// through it; the admin token comes from a file (reload with it works,
// with a wrong one is 403, logged with the invoker and not the token);
// and no password or token shows in any output of a serve that fails or
// of one that runs (its log, /readyz, /metrics, the CLI's).
func TestStoreRedisTLSSecrets(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	pki := testkit.NewPKI(t)
	r := testkit.StartSecureRedis(t, testkit.RedisOptions{TLS: pki, RequireClientCert: true,
		Users: map[string]string{"cmdhost": storePassword}})
	cert, key := pki.Client(t, "cmdhost")
	store := "rediss://cmdhost@" + r.Addr + "/0"
	pwFile, tokFile := writeSecret(t, "store-pw", storePassword), writeSecret(t, "admin-token", testAdminToken)
	storeFlags := []string{"--store", store, "--store-ca", pki.CAFile, "--store-cert", cert, "--store-key", key, "--store-password-file", pwFile}
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "counter.wasm"), dir, "counter.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")

	t.Run("fails", func(t *testing.T) {
		serve := func(args ...string) []string {
			return append([]string{"serve", "--plugins", dir, "--listen", clitest.FreeAddr(t), "--id", "cli-host"}, args...)
		}
		withStore := func(replace map[string]string) []string {
			var out []string
			for i := 0; i < len(storeFlags); i += 2 {
				v := storeFlags[i+1]
				if w, ok := replace[storeFlags[i]]; ok {
					v = w
				}
				out = append(out, storeFlags[i], v)
			}
			return out
		}
		for _, c := range []struct {
			name string
			args []string
			code int
			want string
		}{
			{"a password in the store URL", serve("--store", "rediss://cmdhost:"+storePassword+"@"+r.Addr+"/0"), base.ExitUsage,
				"--store rediss://cmdhost:xxxxx@" + r.Addr + "/0: a password in the URL shows wherever the URL does (ps, the config file, the log): remove it, and give it with --store-password-file FILE (or CMDHOST_STORE_PASSWORD)"},
			{"a store URL that does not parse", serve("--store", "rediss://cmdhost:"+storePassword+"@127.0.0.1:port/0"), base.ExitUsage,
				`--store "rediss://xxxxx@127.0.0.1:port/0": want a URL such as`},
			{"a wrong store password", serve(withStore(map[string]string{"--store-password-file": writeSecret(t, "wrong", "PW-WRONG-1")})...), 1,
				"dedup store " + store + ": WRONGPASS invalid username-password pair"},
			{"no store CA", serve(withStore(map[string]string{"--store-ca": filepath.Join(t.TempDir(), "none.pem")})...), base.ExitUsage,
				"--store-ca: stat "},
			{"no client certificate", serve("--store", store, "--store-ca", pki.CAFile, "--store-password-file", pwFile), 1,
				"certificate required"},
			{"a broker URL with a password", serve(append(withStore(nil), "--broker", "mqtt://cmdhost:"+urlBrokerPassword+"@"+clitest.FreeAddr(t))...), base.ExitUsage,
				"--broker mqtt://cmdhost:xxxxx@"},
			{"both admin token flags", serve("--admin-token-file", tokFile, "--admin-token", testAdminToken), base.ExitUsage,
				"--admin-token-file and --admin-token both give the admin token: keep --admin-token-file"},
		} {
			_, errOut, code := clitest.RunWithin(t, time.Minute, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("%s: exit %d, want %d and %q in:\n%s", c.name, code, c.code, c.want, errOut)
			}
			noSecrets(t, c.name, errOut)
		}
	})

	t.Run("runs", func(t *testing.T) {
		broker := brokertest.StartMosquitto(t)
		metrics := clitest.FreeAddr(t)
		_, stop := clitest.StartServeIn(t, dir, nil, append(storeFlags, "--broker", broker.String(), "--admin-token-file", tokFile,
			"--metrics", metrics)...)

		// A request and its duplicate: one run, one outcome, in Redis.
		c := testkit.Dial(t, broker, "dup-client")
		defer c.Close()
		c.Subscribe(t, "clients/dup/resp")
		expiry := uint32(30)
		req := &paho.Publish{QoS: 1, Topic: "rpc/cli-host/counter", Payload: []byte("hi"),
			Properties: &paho.PublishProperties{CorrelationData: []byte("dup-0001-0123456"), ResponseTopic: "clients/dup/resp", MessageExpiry: &expiry,
				User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}, {Key: "__srcId", Value: "dup-client"}}}}
		var replies []string
		for range 2 {
			c.Publish(t, req)
			reply := c.Next(t)
			t.Logf("reply %q %v", reply.Payload, reply.Properties.User)
			replies = append(replies, string(reply.Payload))
		}
		if replies[0] != "hi:1" || replies[1] != "hi:1" {
			t.Fatalf("a request and its duplicate got %q: want the one run's reply twice", replies)
		}
		if n := dedupKeys(t, r, pki, cert, key); n != 1 {
			t.Fatalf("%d dedup keys in Redis, want the request's", n)
		}

		host := []string{"--broker", broker.String(), "--executor", "cli-host"}
		out, errOut, code := clitest.Run(t, append([]string{"plugin", "reload", "echo", "--token-file", tokFile}, host...)...)
		if code != 0 || !strings.Contains(out, "echo: reload done") {
			t.Fatalf("reload with the token file: %q %q %d", out, errOut, code)
		}
		noSecrets(t, "reload", out+errOut)
		_, errOut, code = clitest.Run(t, append([]string{"plugin", "reload", "echo", "--token-file", writeSecret(t, "wrong", "PW-WRONG-2")}, host...)...)
		if code != 1 || !strings.Contains(errOut, "status 403") || !strings.Contains(errOut, "wrong admin token") {
			t.Fatalf("reload with a wrong token: %q %d", errOut, code)
		}
		noSecrets(t, "a refused reload", errOut)
		_, errOut, code = clitest.Run(t, append([]string{"plugin", "reload", "echo", "--token", testAdminToken}, host...)...)
		if code != 0 || !strings.Contains(errOut, "warning: --token shows the token to anyone who can list processes (ps): give it with --token-file FILE") {
			t.Fatalf("reload with --token: %q %d", errOut, code)
		}

		for _, path := range []string{"/readyz", "/metrics"} {
			resp, err := http.Get("http://" + metrics + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			noSecrets(t, path, string(b))
		}

		log, _ := stop()
		noSecrets(t, "serve's log", log)
		for _, want := range []string{"broker=" + broker.String(), `msg="admin op refused" op=reload invoker=`, `why="wrong token"`} {
			if !strings.Contains(log, want) {
				t.Errorf("serve's log has no %q:\n%s", want, log)
			}
		}
	})
}

// dedupKeys counts the dedup store's keys in r.
func dedupKeys(t *testing.T, r *testkit.Redis, pki *testkit.PKI, cert, key string) int {
	t.Helper()
	pem, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr, Username: "cmdhost", Password: storePassword,
		TLSConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "127.0.0.1"}})
	defer rdb.Close()
	keys, err := rdb.Keys(context.Background(), "cmdhost:dedup:*").Result()
	if err != nil {
		t.Fatal(fmt.Errorf("reading Redis: %w", err))
	}
	return len(keys)
}
