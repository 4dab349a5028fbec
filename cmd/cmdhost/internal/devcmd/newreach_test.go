package devcmd

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// reach is what a project made by cmdhost new reaches beyond the request
// in TestNewBuildsAndLoads (issue 38's acceptance): HTTP servers on
// loopback, plain and TLS on a test CA, an API key in a secret file, and
// a subscriber to the events on the test's host.
type reach struct {
	plain, named, tls *httptest.Server // plain and tls are granted by address; named by its name alone
	caFile, keyFile   string
	sub               *testkit.Client
}

// reachAPIKey is the secret the operator file gives the projects; the
// servers answer /status only to it.
const reachAPIKey = "k-e2e-4f1d"

// newReach starts the servers and the subscriber (on the broker at addr).
// Each server answers /status with "status ok" to a request bearing the
// API key (401 otherwise), and /redirect?to=URL with a redirect.
func newReach(t *testing.T, addr string) *reach {
	t.Helper()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status":
			if r.Header.Get("Authorization") != "Bearer "+reachAPIKey {
				http.Error(w, "no key", http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte("status ok"))
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	rc := &reach{plain: httptest.NewServer(api), named: httptest.NewServer(api)}
	t.Cleanup(rc.plain.Close)
	t.Cleanup(rc.named.Close)
	pki := testkit.NewPKI(t)
	cert, key := pki.Server(t, "api")
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	rc.tls = httptest.NewUnstartedServer(api)
	rc.tls.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	rc.tls.StartTLS()
	t.Cleanup(rc.tls.Close)
	rc.caFile = pki.CAFile
	rc.keyFile = filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(rc.keyFile, []byte(reachAPIKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc.sub = testkit.Dial(t, &url.URL{Scheme: "mqtt", Host: addr}, "new-events-watcher")
	rc.sub.Subscribe(t, "+/events/#")
	return rc
}

// grant writes the operator file of project name into pluginsDir: it may
// publish on NAME/events/#, reach the plain and TLS servers by their
// address (the TLS one on the test CA) and the named one by its name
// alone (which opens no loopback address), with the API key from the
// secret file.
func (rc *reach) grant(t *testing.T, pluginsDir, name string) {
	t.Helper()
	op := fmt.Sprintf(`{"publish": {"topics": [%q]},
  "http": {"hosts": ["http://127.0.0.1:%s", "127.0.0.1:%s", "http://localhost:%s"], "caFile": %q},
  "secrets": {"apiKey": %q}}`, name+"/events/#", clitest.Port(t, rc.plain), clitest.Port(t, rc.tls), clitest.Port(t, rc.named), rc.caFile, rc.keyFile)
	if err := os.WriteFile(filepath.Join(pluginsDir, name+".json"), []byte(op), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check runs the project's NAME-event and NAME-fetch on the host at
// broker: an event on a granted topic reaches the subscriber, one on
// another is refused with a typed error and sent nowhere; HTTP to the
// plain and TLS servers carries the secret and answers; a host not
// granted, a loopback address the grant does not name and a redirect to
// one are refused, each saying why.
func (rc *reach) check(t *testing.T, broker, name string) {
	t.Helper()
	start := time.Now()
	defer func() {
		t.Logf("%s: publishing and HTTP checked in %v", name, time.Since(start).Round(time.Millisecond))
	}()
	invoke := func(command, payload string) (string, string, int) {
		t.Helper()
		return clitest.Run(t, "invoke", command, "-d", payload, "--broker", broker, "--executor", "cli-host")
	}
	refused := func(command, payload, want string) {
		t.Helper()
		out, errOut, code := invoke(command, payload)
		if out != "" || code != base.ExitFailed || !strings.Contains(errOut, "status 500") || !strings.Contains(errOut, want) {
			t.Errorf("invoke %s -d %q: stdout %q, stderr %q, status %d; want status 500 and %q", command, payload, out, errOut, code, want)
		}
	}
	// Refused first: the subscriber's next message must then be the
	// granted one (a refused call sends nothing).
	refused(name+"-event", "alarms/"+name+" ring", "denied: the operator file does not grant publishing on alarms/"+name)
	if out, errOut, code := invoke(name+"-event", name+"/events/door open"); out != "published on "+name+"/events/door" || code != 0 {
		t.Fatalf("invoke %s-event: stdout %q, stderr %q, status %d", name, out, errOut, code)
	}
	m := rc.sub.Next(t)
	if m.Topic != name+"/events/door" || string(m.Payload) != "open" || m.Properties.User.Get("type") != name+".event" ||
		m.Properties.User.Get("cmdhost-message-id") == "" || m.Properties.User.Get("__srcId") == "" {
		t.Errorf("the subscriber got %s %q %+v; want %s/events/door, open, a CloudEvent of type %s.event with its id", m.Topic, m.Payload, m.Properties.User, name, name)
	}

	for _, u := range []string{rc.plain.URL + "/status", rc.tls.URL + "/status"} {
		if out, errOut, code := invoke(name+"-fetch", u); out != "status ok" || code != 0 {
			t.Errorf("invoke %s-fetch -d %s: stdout %q, stderr %q, status %d; want status ok (the API key sent)", name, u, out, errOut, code)
		}
	}
	named := "http://localhost:" + clitest.Port(t, rc.named)
	refused(name+"-fetch", "https://api.example.com/status", "denied: https://api.example.com:443 is not granted")
	refused(name+"-fetch", named+"/status", "denied: address 127.0.0.1:"+clitest.Port(t, rc.named)+" is loopback")
	refused(name+"-fetch", rc.plain.URL+"/redirect?to="+named+"/status", "denied: address 127.0.0.1:"+clitest.Port(t, rc.named)+" is loopback")
	refused(name+"-fetch", rc.plain.URL+"/redirect?to=http://169.254.169.254/latest/meta-data/", "denied: a redirect to http://169.254.169.254")
}
