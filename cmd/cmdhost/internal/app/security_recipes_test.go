package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// docs/security.md's mosquitto recipes, run as they are written: the
// broker's config blocks given to a mosquitto of the test's, and the
// `cmdhost …` lines run against it. The names that stand for the reader's
// files and hosts are replaced by the test's own (recipeNames); the page
// says which.

// securityDoc is the page of the recipes.
func securityDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recipeBlocks returns the fenced blocks of lang (```conf, ```sh) in the
// section of docs/security.md under heading (up to the next heading), in
// their order.
func recipeBlocks(t *testing.T, heading, lang string) []string {
	t.Helper()
	doc := securityDoc(t)
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/security.md has no heading %q", heading)
	}
	section := doc[i+len(heading)+2:]
	fence, end := false, 0
	for _, line := range strings.SplitAfter(section, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		} else if !fence && strings.HasPrefix(line, "#") { // the next heading
			break
		}
		end += len(line)
	}
	section = section[:end]
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(lang)+"\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("docs/security.md, %q: no ```%s block", heading, lang)
	}
	return out
}

// recipeCommands returns the `cmdhost …` lines of the ```sh blocks under
// heading, each with its trailing comment apart.
func recipeCommands(t *testing.T, heading string) []docCommand {
	t.Helper()
	var out []docCommand
	for _, block := range recipeBlocks(t, heading, "sh") {
		for _, line := range strings.Split(block, "\n") {
			c := docCommand{where: heading}
			if i := strings.Index(line, "  #"); i >= 0 {
				c.comment = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line[i:]), "#"))
				line = line[:i]
			}
			if c.text = strings.TrimSpace(line); strings.HasPrefix(c.text, "cmdhost ") {
				out = append(out, c)
			}
		}
	}
	return out
}

// The recipes' headings.
const (
	tlsRecipe = "### mosquitto with TLS and passwords"
	aclRecipe = "### mosquitto: who may call which command"
	aioRecipe = "### The Azure IoT Operations broker: TLS and a service account token"
	// embeddedRecipe is the embedded broker's users, TLS and ACL at once.
	embeddedRecipe = "### The embedded broker with users, TLS and an ACL"
)

// recipeNames replaces, in a recipe's text, the names that stand for the
// reader's files and hosts by the test's: a word of the recipe (a path,
// a placeholder) → the test's value.
type recipeNames map[string]string

func (n recipeNames) apply(s string) string {
	// Longest first: /etc/mosquitto/certs/ca.pem before ca.pem.
	keys := slices.SortedFunc(maps.Keys(n), func(a, b string) int { return len(b) - len(a) })
	var b strings.Builder
	for len(s) > 0 {
		matched := false
		for _, k := range keys {
			// A name is replaced where it is a whole word: not inside
			// another (ID in IDENT, ca.pem in myca.pem), but ID in rpc/ID/#.
			if strings.HasPrefix(s, k) && (b.Len() == 0 || !wordByte(b.String()[b.Len()-1])) &&
				(len(s) == len(k) || !wordByte(s[len(k)])) {
				b.WriteString(n[k])
				s = s[len(k):]
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String()
}

func wordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// listenerLines takes the `listener PORT` line out of a recipe's config
// (the test's listener takes its place, on a free port of 127.0.0.1) and
// returns the rest.
func listenerLines(t *testing.T, conf string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^listener \d+\n`)
	if !re.MatchString(conf) {
		t.Fatalf("the recipe's config has no `listener PORT` line:\n%s", conf)
	}
	return re.ReplaceAllString(conf, "")
}

// mtlsFlags returns what the TLS recipe says to add to each command for
// mTLS: "add `--tls-cert client.pem --tls-key client-key.pem`".
func mtlsFlags(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile("(?s)add\\s+`(--tls-cert [^`]*)`").FindStringSubmatch(securityDoc(t))
	if m == nil {
		t.Fatal("docs/security.md no longer says which flags to add for mTLS (add `--tls-cert …`)")
	}
	return strings.Join(strings.Fields(m[1]), " ")
}

// recipeBroker is a mosquitto run from the TLS recipe's config, and the
// names that replace the recipe's.
type recipeBroker struct {
	names recipeNames
	url   *url.URL
	// hostTLS and clientTLS are the flags of the host's and the
	// operator's client certificates (mTLS).
	hostTLS, clientTLS []string
}

// recipeExecutor replaces the recipes' ID: startServe's --id.
const recipeExecutor = "cli-host"

// Users of the recipes' password file.
const recipeHostPassword, recipeOperatorPassword = "recipe-host-s3cr3t", "recipe-operator-s3cr3t"

// startRecipeBroker starts mosquitto with the TLS recipe's config (with
// mTLS: its commented lines uncommented), then more: mosquitto.conf lines
// whose recipe names the names given replace.
func startRecipeBroker(t *testing.T, mtls bool, more string, names recipeNames) *recipeBroker {
	t.Helper()
	confs := recipeBlocks(t, tlsRecipe, "conf")
	if len(confs) != 1 {
		t.Fatalf("the TLS recipe has %d config blocks; want one", len(confs))
	}
	pki := testkit.NewPKI(t)
	serverCert, serverKey := pki.Server(t, "broker")
	hostCert, hostKey := pki.Client(t, "cli-host")
	clientCert, clientKey := pki.Client(t, "operator")
	maps.Copy(names, recipeNames{
		"/etc/mosquitto/certs/server.pem":     serverCert,
		"/etc/mosquitto/certs/server-key.pem": serverKey,
		"/etc/mosquitto/certs/ca.pem":         pki.CAFile,
		"/etc/mosquitto/passwd":               brokertest.WritePasswordFile(t, map[string]string{"cmdhost": recipeHostPassword, "operator": recipeOperatorPassword}),
		"/run/secrets/mqtt-password":          clitest.SecretFile(t, recipeHostPassword),
		"~/.config/cmdhost/password":          clitest.SecretFile(t, recipeOperatorPassword),
		"ca.pem":                              pki.CAFile,
		"DIR":                                 clitest.Plugins,
		"ID":                                  recipeExecutor,
	})
	conf := listenerLines(t, confs[0])
	if mtls {
		conf = regexp.MustCompile(`(?m)^# (cafile|require_certificate) `).ReplaceAllString(conf, "$1 ")
		if !strings.Contains(conf, "\nrequire_certificate true") {
			t.Fatalf("the recipe's config has no `# require_certificate true` line to uncomment:\n%s", confs[0])
		}
	}
	b := &recipeBroker{names: names}
	b.url = brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{Listener: names.apply(conf + more)})
	names["broker.example:8883"] = b.url.Host
	if mtls {
		// The page's flags, with a certificate of each client's own.
		add := mtlsFlags(t)
		b.hostTLS = strings.Fields(recipeNames{"client.pem": hostCert, "client-key.pem": hostKey}.apply(add))
		b.clientTLS = strings.Fields(recipeNames{"client.pem": clientCert, "client-key.pem": clientKey}.apply(add))
	}
	return b
}

// serve starts the TLS recipe's serve line.
func (b *recipeBroker) serve(t *testing.T) {
	t.Helper()
	cmds := recipeCommands(t, tlsRecipe)
	if len(cmds) == 0 || !strings.HasPrefix(cmds[0].text, "cmdhost serve ") {
		t.Fatalf("the TLS recipe's first command is not a serve: %q", cmds)
	}
	// startServe gives --plugins, --listen and --id of its own; those the
	// recipe gives come after, and are the same.
	clitest.StartServe(t, nil, append(strings.Fields(b.names.apply(cmds[0].text))[2:], b.hostTLS...)...)
}

// invoke runs a recipe's cmdhost line (an invoke, an admin command) and
// checks what its comment says: "→ OUT", or "TEXT on stderr, exit N"
// (or on stdout).
func (b *recipeBroker) invoke(t *testing.T, c docCommand) {
	t.Helper()
	args := append(strings.Fields(b.names.apply(c.text))[1:], b.clientTLS...)
	out, errOut, code := clitest.RunWithin(t, time.Minute, args...)
	comment := b.names.apply(c.comment)
	if want, ok := strings.CutPrefix(comment, "→ "); ok {
		if out != want || code != 0 {
			t.Errorf("%s\nstdout %q, stderr %q, exit %d; the recipe says %q", c.text, out, errOut, code, c.comment)
		}
		return
	}
	m := regexp.MustCompile(`^(.+) on (stderr|stdout), exit (\d+)$`).FindStringSubmatch(comment)
	if m == nil {
		t.Fatalf("%s: the comment %q says nothing this test can check: write \"→ OUTPUT\" or \"TEXT on stderr (or stdout), exit N\"", c.text, c.comment)
	}
	where := errOut
	if m[2] == "stdout" {
		where = out
	}
	if !strings.Contains(where, m[1]) || strconv.Itoa(code) != m[3] {
		t.Errorf("%s\nstdout %q, stderr %q, exit %d; the recipe says %q", c.text, out, errOut, code, c.comment)
	}
}

// TestDocsSecurityRecipes runs docs/security.md's "mosquitto with TLS and
// passwords": mosquitto with the recipe's config, then its serve and its
// invoke, which must print hi; again with mTLS, as the page says: the
// config's commented lines uncommented, and the flags it names added to
// each command, with a certificate of each client's own.
func TestDocsSecurityRecipes(t *testing.T) {
	testkit.Needs(t, testkit.Mosquitto)
	testkit.Needs(t, testkit.Plugins)
	cmds := recipeCommands(t, tlsRecipe)
	if len(cmds) != 2 || !strings.HasPrefix(cmds[1].text, "cmdhost invoke ") {
		t.Fatalf("the recipe is a serve and an invoke line; found %q", cmds)
	}
	for _, mtls := range []bool{false, true} {
		name := "TLS and passwords"
		if mtls {
			name = "mTLS"
		}
		t.Run(name, func(t *testing.T) {
			b := startRecipeBroker(t, mtls, "", recipeNames{})
			b.serve(t)
			b.invoke(t, cmds[1])
		})
	}
}

// TestDocsSecurityACL runs docs/security.md's "mosquitto: who may call
// which command": the TLS recipe's mosquitto with the recipe's acl_file,
// the recipe's host; its invoke lines (the operator calls echo; another
// command is refused by the broker, and said so at once); then, as a raw
// client of the operator's, subscriptions to # and to another client's
// responses refused (SUBACK 0x87), its own responses granted, and
// nothing from the calls made meanwhile delivered on the refused ones.
func TestDocsSecurityACL(t *testing.T) {
	testkit.Needs(t, testkit.Mosquitto)
	testkit.Needs(t, testkit.Plugins)
	acls := recipeBlocks(t, aclRecipe, "conf")
	m := regexp.MustCompile("In `mosquitto.conf`[^`]*`(acl_file (\\S+))`").FindStringSubmatch(securityDoc(t))
	if len(acls) != 1 || m == nil {
		t.Fatalf("the ACL recipe is one config block (the ACL file) and the mosquitto.conf line `acl_file FILE`; found %d blocks, line %q", len(acls), m)
	}
	aclPath := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(aclPath, []byte(recipeNames{"ID": recipeExecutor}.apply(acls[0])), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startRecipeBroker(t, false, m[1]+"\n", recipeNames{m[2]: aclPath})
	b.serve(t)
	cmds := recipeCommands(t, aclRecipe)
	if len(cmds) < 2 {
		t.Fatalf("the ACL recipe shows %d commands; want a call allowed and one refused", len(cmds))
	}
	for _, c := range cmds {
		b.invoke(t, c)
	}

	// The operator's own client, its client id "operator-raw".
	op := b.rawClient(t, "operator", recipeOperatorPassword, "operator-raw")
	// mosquitto 2.0.11 grants these (SUBACK 0x01) and checks each message
	// against the ACL when it would deliver it; a broker may refuse them
	// (0x87) instead. Either way nothing may come on them: see the mark.
	for _, filter := range []string{"#", "rpc/" + recipeExecutor + "/#", "clients/+/rpc/response", "clients/another-client/rpc/response"} {
		if code := op.subscribe(t, filter); code != 0x87 && code != 1 {
			t.Errorf("the operator subscribing to %s: SUBACK 0x%02X; want 0x87 (not authorized) or 0x01", filter, code)
		} else {
			t.Logf("the operator subscribing to %s: SUBACK 0x%02X", filter, code)
		}
	}
	own := "clients/operator-raw/rpc/response"
	if code := op.subscribe(t, own); code != 1 {
		t.Fatalf("the operator subscribing to its own responses %s: SUBACK 0x%02X; want 0x01 (granted QoS 1)", own, code)
	}
	// Calls made now would be delivered on a refused subscription before a
	// mark the host's user sends to the operator's own topic afterwards
	// (mosquitto passes messages on in the order it took them): the mark
	// must be the first message the operator gets.
	cmds[0].comment = "" // run again, the output not checked
	if out, errOut, code := clitest.Run(t, strings.Fields(b.names.apply(cmds[0].text))[1:]...); code != 0 {
		t.Fatalf("%s: %q %q exit %d", cmds[0].text, out, errOut, code)
	}
	host := b.rawClient(t, "cmdhost", recipeHostPassword, "host-raw")
	host.publish(t, own, "mark")
	if got := op.next(t); got.Topic != own || string(got.Payload) != "mark" {
		t.Errorf("the operator got %s %q before the mark: a refused subscription delivered", got.Topic, got.Payload)
	}
}

// TestDocsSecurityEmbedded runs docs/security.md's "The embedded broker
// with users, TLS and an ACL" as it is written (issue 39): its ACL file,
// its two user add lines, its serve, then each client line, checked as
// its comment says (the operator's echo answered, another command and
// the admin ops refused by the broker; the admin's plugin list served).
func TestDocsSecurityEmbedded(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	acls := recipeBlocks(t, embeddedRecipe, "conf")
	cmds := recipeCommands(t, embeddedRecipe)
	if len(acls) != 1 || len(cmds) < 5 || !strings.HasPrefix(cmds[0].text, "cmdhost user add ") || !strings.HasPrefix(cmds[2].text, "cmdhost serve ") {
		t.Fatalf("the recipe is an ACL file, two user add lines, a serve and client lines; found %d config blocks and %q", len(acls), cmds)
	}
	tmp := t.TempDir()
	pki := testkit.NewPKI(t)
	serverCert, serverKey := pki.Server(t, "broker")
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	tlsAddr := clitest.FreeAddr(t)
	names := recipeNames{
		"/etc/cmdhost/users":  filepath.Join(tmp, "users"),
		"/etc/cmdhost/acl":    filepath.Join(tmp, "acl"),
		"operator-password":   clitest.SecretFile(t, recipeOperatorPassword),
		"admin-password":      clitest.SecretFile(t, recipeHostPassword),
		"server.pem":          serverCert,
		"server-key.pem":      serverKey,
		"ca.pem":              pki.CAFile,
		"0.0.0.0:8883":        tlsAddr,
		"broker.example:8883": tlsAddr,
		"DIR":                 dir,
		"ID":                  recipeExecutor,
	}
	if err := os.WriteFile(names["/etc/cmdhost/acl"], []byte(names.apply(acls[0])), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds[:2] {
		if out, errOut, code := clitest.Run(t, strings.Fields(names.apply(c.text))[1:]...); code != 0 {
			t.Fatalf("%s: %q %q exit %d", c.text, out, errOut, code)
		}
	}
	// startServeIn gives --plugins, --listen and --id of its own; those
	// the recipe gives come after, and are the same.
	clitest.StartServeIn(t, dir, nil, strings.Fields(names.apply(cmds[2].text))[2:]...)
	b := &recipeBroker{names: names}
	for _, c := range cmds[3:] {
		b.invoke(t, c)
	}
}

// aclClient is a raw MQTT client of a recipe's broker, as one of its users.
type aclClient struct {
	cm  *autopaho.ConnectionManager
	got chan *paho.Publish
}

// rawClient connects to the recipe's broker (TLS on the recipe's CA) as
// user with password and clientID, and waits until it is connected.
func (b *recipeBroker) rawClient(t *testing.T, user, password, clientID string) *aclClient {
	t.Helper()
	ca, err := os.ReadFile(b.names["ca.pem"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	c := &aclClient{got: make(chan *paho.Publish, 16)}
	c.cm, err = autopaho.NewConnection(context.Background(), autopaho.ClientConfig{
		ServerUrls: []*url.URL{b.url}, TlsCfg: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		KeepAlive: 30, CleanStartOnInitialConnection: true,
		ConnectUsername: user, ConnectPassword: []byte(password),
		ClientConfig: paho.ClientConfig{ClientID: clientID,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				c.got <- pr.Packet
				return true, nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cm.Disconnect(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	if err := c.cm.AwaitConnection(ctx); err != nil {
		t.Fatalf("%s connecting as %s: %v", clientID, user, err)
	}
	return c
}

// subscribe subscribes to filter at QoS 1 and returns the SUBACK's
// reason code.
func (c *aclClient) subscribe(t *testing.T, filter string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	sa, err := c.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if sa == nil || len(sa.Reasons) != 1 {
		t.Fatalf("subscribing to %s: %v", filter, err)
	}
	return sa.Reasons[0]
}

func (c *aclClient) publish(t *testing.T, topic, payload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	if _, err := c.cm.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: []byte(payload)}); err != nil {
		t.Fatalf("publishing to %s: %v", topic, err)
	}
}

func (c *aclClient) next(t *testing.T) *paho.Publish {
	t.Helper()
	select {
	case p := <-c.got:
		return p
	case <-time.After(time.Minute): // hang guard
		t.Fatal("no message within a minute")
		return nil
	}
}

// TestDocsSecurityAIO runs docs/security.md's "The Azure IoT Operations
// broker": its stand-in (the embedded broker with TLS and --sat-key, a
// JWKS of the test's issuer), then the recipe's serve and invoke against
// it with a token the test signs for the broker's audience.
func TestDocsSecurityAIO(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	cmds := recipeCommands(t, aioRecipe)
	if len(cmds) != 3 || !strings.HasPrefix(cmds[0].text, "cmdhost serve ") || !strings.HasPrefix(cmds[1].text, "cmdhost invoke ") ||
		!strings.HasPrefix(cmds[2].text, "cmdhost serve ") {
		t.Fatalf("the recipe is a serve, an invoke and the stand-in broker's serve; found %q", cmds)
	}
	pki := testkit.NewPKI(t)
	serverCert, serverKey := pki.Server(t, "broker")
	iss := testkit.NewIssuer(t)
	tokenFile := filepath.Join(t.TempDir(), "broker-sat")
	testkit.WriteToken(t, tokenFile, iss.Token(t, "system:serviceaccount:azure-iot-operations:cmdhost", "aio-internal", time.Now().Add(time.Hour), nil))
	tlsAddr := clitest.FreeAddr(t)
	acls := recipeBlocks(t, aioRecipe, "conf")
	if len(acls) != 1 {
		t.Fatalf("the recipe has %d ACL blocks; want one", len(acls))
	}
	acl := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(acl, []byte(recipeNames{"ID": recipeExecutor}.apply(acls[0])), 0o600); err != nil {
		t.Fatal(err)
	}
	names := recipeNames{
		"acl":                                acl,
		"aio-broker:18883":                   tlsAddr,
		"127.0.0.1:18883":                    tlsAddr,
		"/var/run/certs/ca.crt":              pki.CAFile,
		"/var/run/secrets/tokens/broker-sat": tokenFile,
		"server.pem":                         serverCert,
		"server-key.pem":                     serverKey,
		"jwks.json":                          iss.JWKSFile,
		"empty":                              t.TempDir(),
		"DIR":                                clitest.Plugins,
		"ID":                                 recipeExecutor,
	}
	// The stand-in: startServeIn's own --plugins, --listen and --id come
	// first; the recipe's --plugins and --id override them.
	empty := names["empty"]
	clitest.StartServeIn(t, empty, nil, strings.Fields(names.apply(cmds[2].text))[2:]...)
	clitest.StartServe(t, nil, strings.Fields(names.apply(cmds[0].text))[2:]...)
	(&recipeBroker{names: names}).invoke(t, cmds[1])
}
