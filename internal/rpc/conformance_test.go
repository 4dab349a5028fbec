package rpc_test

// Conformance harness: runs every METL CommandExecutor case of the Azure
// IoT Operations SDKs' language-neutral suite (read from
// ../shared/conformance, never copied into the repo) against the real
// rpc.Executor, through the packet-level fake broker rpctest and an
// injected clock that the cases freeze and unfreeze.
//
// Each case is a subtest named after its file; at the end one line
// "conformance: N passed, N failed, N skipped" is printed. `make
// conformance` runs it.
//
// Mapping of METL onto cmdhost:
//   - The prologue's executors become the Commands of one rpc.Executor (the
//     fake broker serves one client at a time); their executor-id,
//     topic-namespace and topic-token-map become its Config and must agree.
//     Each command's handler is a native Go stand-in for the SDK's test
//     user code and test serializer (conformance_handler_test.go).
//   - "invalid configuration" errors are NewExecutor's; "mqtt error" at
//     initialization is Start's, at finalization Unsubscribe's.
//   - Actions drive the broker: receive request = Deliver, await publish /
//     acknowledgement = WaitPublished / WaitAcks in order, disconnect =
//     Disconnect (without redelivery, as METL's mock client; a case
//     delivers again itself), freeze / unfreeze / sleep = the clock.

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/cmdhost/cmdhost/internal/clock"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/rpc/rpctest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// skipReasons lists the cases cmdhost does not run, with why. A case that
// requires a feature cmdhost does not have must be listed here.
var skipReasons = map[string]string{
	"CommandExecutorZeroTimeout_ThrowsException": "PROTOCOL.md (Timeouts): an execution timeout of 0 means none, " +
		"so zero is a valid setting for cmdhost (rpc.Command.Timeout 0 = only the request's expiry); " +
		"the case requires 'explicit-default', which cmdhost's sentinel-zero settings are not",
}

// features are the METL platform features cmdhost has; a case that requires
// another is skipped. Not: explicit-default (a zero or empty setting means its
// default), unobtanium.
var features = map[string]bool{
	"ack-ordering": true, "topic-filtering": true, "reconnection": true,
	"caching": true, "dispatch": true, "multiple-serializers": true,
}

// awaitTimeout bounds every wait of an action; the longest a case needs is
// a request's 10 s expiry running out in real time.
const awaitTimeout = 30 * time.Second

type tally struct {
	mu                      sync.Mutex
	passed, failed, skipped int
}

func (c *tally) record(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t.Failed():
		c.failed++
	case t.Skipped():
		c.skipped++
	default:
		c.passed++
	}
}

// conformanceAbsent is the line `make conformance` prints without the
// cases (a fresh clone has none): that they are optional, and how to get
// them.
const conformanceAbsent = "conformance: skipped (optional): the METL cases of Azure IoT Operations are not at ../shared/conformance;" +
	" to run them: git clone https://github.com/Azure/iot-operations-sdks and" +
	" CMDHOST_CONFORMANCE=iot-operations-sdks/eng/test/test-cases/Protocol make conformance"

func TestConformance(t *testing.T) {
	dir, ok, err := conformanceDir()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if conformanceRequired() {
			t.Fatalf("conformance cases are missing at %s: under CI they must be present", dir)
		}
		fmt.Println(conformanceAbsent)
		t.Skip("no conformance cases at " + dir)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "CommandExecutor", "defaults.toml"))
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := parseTOML(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "CommandExecutor", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s: %v", dir, err)
	}
	var count tally
	// Cleanup runs once every (parallel) subtest is done.
	t.Cleanup(func() {
		fmt.Printf("conformance: %d passed, %d failed, %d skipped\n", count.passed, count.failed, count.skipped)
	})
	for _, file := range files {
		// The file name, not test-name: two files share a test-name.
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			defer count.record(t)
			if reason, ok := skipReasons[name]; ok {
				t.Skip("conformance: skipped: " + reason)
			}
			doc, err := loadCase(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range asList(doc["requires"]) {
				if s, _ := asString(f); !features[s] {
					t.Fatalf("requires feature %q, which cmdhost lacks, and skipReasons has no reason", f)
				}
			}
			t.Parallel()
			newCaseRun(t, defaults).run(doc)
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// testClock is the executor's clock: real time plus an offset, or frozen.
// Sleeping while frozen advances it.
type testClock struct {
	mu     sync.Mutex
	frozen bool
	at     time.Time     // while frozen
	offset time.Duration // while running: Now = time.Now() + offset
}

// AfterFunc runs on real time: the executor's timers take durations
// computed from Now.
func (*testClock) AfterFunc(d time.Duration, f func()) clock.Timer { return time.AfterFunc(d, f) }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		return c.at
	}
	return time.Now().Add(c.offset)
}

func (c *testClock) Freeze() {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frozen {
		c.frozen, c.at = true, now
	}
}

func (c *testClock) Unfreeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		c.frozen, c.offset = false, time.Until(c.at)
	}
}

// Sleep lets d pass: for real while time runs (the executor's timers are
// real), on the clock alone while it is frozen.
func (c *testClock) Sleep(d time.Duration) {
	c.mu.Lock()
	if c.frozen {
		c.at = c.at.Add(d)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	time.Sleep(d)
}

// caseRun is the state of one running case.
type caseRun struct {
	t        *testing.T
	defaults tree
	clock    *testClock
	broker   *rpctest.Broker
	exec     *rpc.Executor
	log      *testkit.LogBuffer // the executor's log, shown when a case fails
	handlers []*metlHandler
	events   map[string]*countdown
	teardown chan struct{}

	correlations map[int][]byte // correlation-index → correlation data
	sources      map[int]string // source-index → __srcId
	packets      map[int]uint16 // packet-index → packet id
	pubCursor    int            // publishes awaited so far
	ackCursor    int            // acks awaited so far
}

func newCaseRun(t *testing.T, defaults tree) *caseRun {
	return &caseRun{
		t: t, defaults: defaults, clock: &testClock{}, broker: rpctest.NewBroker(), log: &testkit.LogBuffer{},
		events: map[string]*countdown{}, teardown: make(chan struct{}),
		correlations: map[int][]byte{}, sources: map[int]string{}, packets: map[int]uint16{},
	}
}

func (r *caseRun) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
	r.t.Cleanup(cancel)
	return ctx
}

func (r *caseRun) run(doc tree) {
	t := r.t
	if err := checkKeys(doc, "case", "test-name", "description", "requires", "prologue", "actions", "epilogue"); err != nil {
		t.Fatal(err)
	}
	// METL's mock client does not get unacknowledged requests again after
	// a reconnection; the cases redeliver themselves when they mean to.
	r.broker.SetRedeliverOnReconnect(false)
	t.Cleanup(func() {
		close(r.teardown)
		if r.exec != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = r.exec.Stop(ctx)
			cancel()
		}
		_ = r.broker.Close()
		if t.Failed() {
			t.Logf("executor log:\n%s", r.log.String())
		}
	})

	prologue, _ := doc["prologue"].(tree)
	if !r.prologue(prologue) {
		return // the prologue's expected error was checked
	}
	for i, a := range asList(doc["actions"]) {
		action, _ := a.(tree)
		if err := r.action(action); err != nil {
			t.Fatalf("action %d (%v): %v", i, action["action"], err)
		}
	}
	epilogue, _ := doc["epilogue"].(tree)
	r.epilogue(epilogue)
}

// prologue builds and starts the executor. It reports false when the case
// ends there (an expected error, checked).
func (r *caseRun) prologue(p tree) bool {
	t := r.t
	if err := checkKeys(p, "prologue", "mqtt-config", "push-acks", "executors", "catch", "countdown-events"); err != nil {
		t.Fatal(err)
	}
	for name, n := range sub(p, "countdown-events") {
		c, ok := asInt(n)
		if !ok {
			t.Fatalf("countdown event %s: %v is not an integer", name, n)
		}
		r.events[name] = newCountdown(c)
	}
	for kind, q := range sub(p, "push-acks") {
		var acks []rpctest.Ack
		for _, k := range asList(q) {
			switch k {
			case "success":
				acks = append(acks, rpctest.AckSuccess)
			case "fail":
				acks = append(acks, rpctest.AckFail)
			case "drop":
				acks = append(acks, rpctest.AckDrop)
			default:
				t.Fatalf("push-acks %s: unknown ack kind %v", kind, k)
			}
		}
		switch kind {
		case "publish":
			r.broker.PushPublishAcks(acks...)
		case "subscribe":
			r.broker.PushSubscribeAcks(acks...)
		case "unsubscribe":
			r.broker.PushUnsubscribeAcks(acks...)
		default:
			t.Fatalf("push-acks: unknown queue %q", kind)
		}
	}

	cfg, cmds := r.executors(p)
	if mc := sub(p, "mqtt-config"); mc != nil {
		if err := checkKeys(mc, "mqtt-config", "client-id"); err != nil {
			t.Fatal(err)
		}
		cfg.Session.ClientID, _ = asString(mc["client-id"])
	}
	cfg.Session.Broker, _ = url.Parse("mqtt://rpctest:1883")
	cfg.Session.Dial = r.broker.Dial
	cfg.Clock = r.clock
	cfg.Session.ReconnectDelay = 20 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))

	catch, _ := p["catch"].(tree)
	kind, _ := asString(catch["error-kind"])
	exec, err := rpc.NewExecutor(cfg, cmds)
	if kind == "invalid configuration" {
		checkCatch(t, catch, err, true)
		return false
	}
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	r.exec = exec
	err = exec.Start(r.ctx())
	if kind == "mqtt error" {
		checkCatch(t, catch, err, false)
		return false
	}
	if catch != nil {
		t.Fatalf("the harness does not know prologue error-kind %q", kind)
	}
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return true
}

// executors maps the prologue's executors onto one Config and its Commands.
func (r *caseRun) executors(p tree) (rpc.Config, []rpc.Command) {
	t := r.t
	defExec := sub(r.defaults, "prologue.executor")
	var cfg rpc.Config
	var cmds []rpc.Command
	var shared []any
	for i, e := range asList(p["executors"]) {
		given, _ := e.(tree)
		if err := checkKeys(given, "executor", "command-name", "serializer", "request-topic", "executor-id",
			"topic-namespace", "topic-token-map", "idempotent", "cache-ttl", "execution-timeout",
			"request-responses-map", "response-metadata", "token-metadata-prefix", "execution-concurrency",
			"raise-error", "sync"); err != nil {
			t.Fatal(err)
		}
		ex := overlay(defExec, given)
		ser, _ := given["serializer"].(tree)
		ser = overlay(sub(defExec, "serializer"), ser)
		if err := checkKeys(ser, "serializer", "out-content-type", "accept-content-types",
			"indicate-character-data", "allow-character-data", "fail-deserialization"); err != nil {
			t.Fatal(err)
		}

		// Executor-wide settings: one Config for every executor of the case.
		tokens := map[string]string{}
		for k, v := range sub(ex, "topic-token-map") {
			tokens[k], _ = asString(v)
		}
		executorID, _ := asString(ex["executor-id"])
		namespace, _ := asString(ex["topic-namespace"])
		these := []any{executorID, namespace, tokens}
		if i == 0 {
			shared = these
			cfg.ExecutorID, cfg.TopicNamespace = executorID, namespace
			if len(tokens) > 0 {
				cfg.TopicTokens = tokens
			}
		} else if !reflect.DeepEqual(these, shared) {
			t.Fatalf("executor %d: executor-id, topic-namespace and topic-token-map differ from executor 0's; one rpc.Executor cannot have both", i)
		}
		if v, ok := ex["cache-ttl"]; ok && v != nil {
			t.Fatalf("executor %d: cache-ttl (response reuse) is not supported by the harness", i)
		}

		name, _ := asString(ex["command-name"]) // null: no name
		topic, _ := asString(ex["request-topic"])
		cmd := rpc.Command{Name: name, Topic: topic}
		cmd.Idempotent, _ = asBool(ex["idempotent"])
		if v := ex["execution-timeout"]; v != nil { // null: none
			d, err := asDuration(v)
			if err != nil {
				t.Fatalf("executor %d: execution-timeout: %v", i, err)
			}
			cmd.Timeout = d
		}
		if v := ex["execution-concurrency"]; v != nil {
			cmd.Concurrency, _ = asInt(v)
		}

		h := &metlHandler{
			responses: map[string][]string{}, next: map[string]int{},
			events: r.events, teardown: r.teardown,
		}
		h.serializer.outContentType, _ = asString(ser["out-content-type"])
		for _, ct := range asList(ser["accept-content-types"]) {
			s, _ := asString(ct)
			h.serializer.acceptContentTypes = append(h.serializer.acceptContentTypes, s)
		}
		h.serializer.indicateCharacterData, _ = asBool(ser["indicate-character-data"])
		h.serializer.allowCharacterData, _ = asBool(ser["allow-character-data"])
		h.serializer.failDeserialization, _ = asBool(ser["fail-deserialization"])
		for req, list := range sub(ex, "request-responses-map") {
			for _, v := range asList(list) {
				s, _ := asString(v)
				h.responses[req] = append(h.responses[req], s)
			}
		}
		if md := sub(ex, "response-metadata"); md != nil {
			h.metadata = map[string]*string{}
			for k, v := range md {
				if s, ok := asString(v); ok {
					h.metadata[k] = &s
				} else {
					h.metadata[k] = nil
				}
			}
		}
		if v, ok := asString(ex["token-metadata-prefix"]); ok {
			h.tokenPrefix = &v
			h.resolvedTokens = map[string]string{}
			for _, tok := range patternTokens(namespace, topic) {
				switch v, ok := tokens[tok]; {
				case ok:
					h.resolvedTokens[tok] = v
				case tok == "executorId":
					h.resolvedTokens[tok] = executorID
				case tok == "commandName":
					h.resolvedTokens[tok] = name
				}
			}
		}
		h.raiseError, _ = asBool(ex["raise-error"])
		for _, s := range asList(ex["sync"]) {
			m, _ := s.(tree)
			if err := checkKeys(m, "sync", "signal-event", "wait-event"); err != nil {
				t.Fatal(err)
			}
			var op syncOp
			op.signal, _ = asString(m["signal-event"])
			op.wait, _ = asString(m["wait-event"])
			for _, ev := range []string{op.signal, op.wait} {
				if ev != "" && r.events[ev] == nil {
					t.Fatalf("executor %d: sync on undeclared countdown event %q", i, ev)
				}
			}
			h.sync = append(h.sync, op)
		}
		cmd.Handler = h.handle
		r.handlers = append(r.handlers, h)
		cmds = append(cmds, cmd)
	}
	return cfg, cmds
}

// checkCatch checks an expected error: present, and naming the offending
// setting (supplemental property-name, compared without case or
// separators), its value and the command where the case says so.
func checkCatch(t *testing.T, catch tree, err error, shallow bool) {
	t.Helper()
	if err := checkKeys(catch, "catch", "error-kind", "is-shallow", "is-remote", "message", "supplemental"); err != nil {
		t.Fatal(err)
	}
	kind, _ := asString(catch["error-kind"])
	if err == nil {
		t.Fatalf("want an error (%s), got none", kind)
	}
	if v, ok := asBool(catch["is-shallow"]); ok && v != shallow {
		t.Errorf("is-shallow: want %t; cmdhost reports %s errors %s", v, kind, map[bool]string{true: "from NewExecutor, before any network", false: "from the broker"}[shallow])
	}
	if v, ok := asBool(catch["is-remote"]); ok && v {
		t.Errorf("is-remote: want true; the executor's errors are local")
	}
	for k, v := range sub(catch, "supplemental") {
		want, _ := asString(v)
		switch k {
		case "property-name":
			if !strings.Contains(squash(err.Error()), squash(want)) {
				t.Errorf("the error does not name the property %q: %v", want, err)
			}
		case "property-value", "command-name":
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not hold the %s %q: %v", k, want, err)
			}
		default:
			t.Errorf("the harness does not know supplemental %q", k)
		}
	}
}

// squash lowercases s and drops everything but letters and digits, so
// that "ExecutionTimeout", "execution timeout" and "execution_timeout"
// compare equal (the cases write property names in any case, with or
// without separators).
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (r *caseRun) action(a tree) error {
	kind, _ := asString(a["action"])
	switch kind {
	case "receive request":
		return r.receiveRequest(a)
	case "await publish":
		if err := checkKeys(a, kind, "action", "correlation-index"); err != nil {
			return err
		}
		pubs, err := r.broker.WaitPublished(r.ctx(), r.pubCursor+1)
		if err != nil {
			return err
		}
		p := pubs[r.pubCursor]
		r.pubCursor++
		if v, ok := a["correlation-index"]; ok {
			want, err := r.correlation(v)
			if err != nil {
				return err
			}
			if got := p.Properties.CorrelationData; !bytes.Equal(got, want) {
				return fmt.Errorf("publish %d has correlation data %x, want correlation-index %v (%x)", r.pubCursor, got, v, want)
			}
		}
		return nil
	case "await acknowledgement":
		if err := checkKeys(a, kind, "action", "packet-index"); err != nil {
			return err
		}
		acks, err := r.broker.WaitAcks(r.ctx(), r.ackCursor+1)
		if err != nil {
			return err
		}
		id := acks[r.ackCursor]
		r.ackCursor++
		if v, ok := a["packet-index"]; ok {
			i, _ := asInt(v)
			want, ok := r.packets[i]
			if !ok {
				return fmt.Errorf("packet-index %v was never received", v)
			}
			if id != want {
				return fmt.Errorf("ack %d is for packet %d, want packet-index %d (packet %d); acks %v", r.ackCursor, id, i, want, acks)
			}
		}
		return nil
	case "sync":
		if err := checkKeys(a, kind, "action", "signal-event", "wait-event"); err != nil {
			return err
		}
		if ev, ok := asString(a["signal-event"]); ok {
			c := r.events[ev]
			if c == nil {
				return fmt.Errorf("undeclared countdown event %q", ev)
			}
			c.Signal()
		}
		if ev, ok := asString(a["wait-event"]); ok {
			c := r.events[ev]
			if c == nil {
				return fmt.Errorf("undeclared countdown event %q", ev)
			}
			return c.Wait(r.ctx(), nil)
		}
		return nil
	case "disconnect":
		if err := checkKeys(a, kind, "action"); err != nil {
			return err
		}
		// Cut the network once what the broker has answered has arrived:
		// METL's mock client acknowledges synchronously.
		if err := r.broker.Flush(r.ctx()); err != nil {
			return err
		}
		r.broker.Disconnect()
		return nil
	case "sleep":
		if err := checkKeys(a, kind, "action", "duration"); err != nil {
			return err
		}
		d, err := asDuration(a["duration"])
		if err != nil {
			return err
		}
		r.clock.Sleep(d)
		return nil
	case "freeze time":
		r.clock.Freeze()
		return checkKeys(a, kind, "action")
	case "unfreeze time":
		r.clock.Unfreeze()
		return checkKeys(a, kind, "action")
	}
	return fmt.Errorf("the harness does not know action %q", kind)
}

// correlation returns the correlation data of a correlation-index (nil
// for null), minting a random UUID for an index seen first.
func (r *caseRun) correlation(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	i, ok := asInt(v)
	if !ok {
		return nil, fmt.Errorf("correlation-index %v is not an integer", v)
	}
	if c, ok := r.correlations[i]; ok {
		return c, nil
	}
	c := make([]byte, 16)
	_, _ = rand.Read(c)
	c[6] = c[6]&0x0f | 0x40 // a version 4 UUID
	c[8] = c[8]&0x3f | 0x80
	r.correlations[i] = c
	return c, nil
}

// receiveRequest delivers a request built from the action over the
// defaults of defaults.toml [actions.receive-request].
func (r *caseRun) receiveRequest(given tree) error {
	if err := checkKeys(given, "receive request", "action", "topic", "payload", "content-type", "format-indicator",
		"metadata", "correlation-index", "correlation-id", "qos", "message-expiry", "response-topic",
		"source-index", "packet-index"); err != nil {
		return err
	}
	a := overlay(sub(r.defaults, "actions.receive-request"), given)
	p := &packets.Publish{Properties: &packets.Properties{}}
	p.Topic, _ = asString(a["topic"])
	qos, _ := asInt(a["qos"])
	p.QoS = byte(qos)
	if s, ok := asString(a["payload"]); ok {
		p.Payload = []byte(s)
	}
	p.Properties.ContentType, _ = asString(a["content-type"])
	if v := a["format-indicator"]; v != nil {
		f, _ := asInt(v)
		b := byte(f)
		p.Properties.PayloadFormat = &b
	}
	if id, ok := asString(a["correlation-id"]); ok {
		p.Properties.CorrelationData = []byte(id)
		if i, ok := asInt(a["correlation-index"]); ok {
			r.correlations[i] = p.Properties.CorrelationData
		}
	} else {
		c, err := r.correlation(a["correlation-index"])
		if err != nil {
			return err
		}
		p.Properties.CorrelationData = c
	}
	if v := a["message-expiry"]; v != nil {
		d, err := asDuration(v)
		if err != nil {
			return fmt.Errorf("message-expiry: %w", err)
		}
		s := uint32((d + time.Second - 1) / time.Second)
		p.Properties.MessageExpiry = &s
	}
	p.Properties.ResponseTopic, _ = asString(a["response-topic"])
	if v := a["source-index"]; v != nil {
		i, _ := asInt(v)
		src, ok := r.sources[i]
		if !ok {
			src = "invoker-" + strconv.Itoa(i)
			r.sources[i] = src
		}
		p.Properties.User = append(p.Properties.User, packets.User{Key: "__srcId", Value: src})
	}
	md := sub(a, "metadata")
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := asString(md[k])
		p.Properties.User = append(p.Properties.User, packets.User{Key: k, Value: v})
	}
	id, err := r.broker.Deliver(p)
	if err != nil {
		return err
	}
	if v, ok := a["packet-index"]; ok {
		i, _ := asInt(v)
		r.packets[i] = id
	}
	return nil
}

// epilogue checks the outcome, then finalizes the executor.
func (r *caseRun) epilogue(e tree) {
	t := r.t
	if err := checkKeys(e, "epilogue", "subscribed-topics", "publication-count", "published-messages",
		"acknowledgement-count", "execution-count", "execution-counts", "catch"); err != nil {
		t.Fatal(err)
	}
	if l := asList(e["subscribed-topics"]); l != nil {
		subs := r.broker.Subscriptions()
		for _, v := range l {
			if s, _ := asString(v); !slices.Contains(subs, s) {
				t.Errorf("subscribed-topics: %q is not among the subscriptions %q", s, subs)
			}
		}
	}
	// Counts: wait (briefly) for what is still due, then compare exactly.
	settle := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	if v, ok := asInt(e["acknowledgement-count"]); ok {
		_, _ = r.broker.WaitAcks(settle(), v)
		if got := r.broker.Acks(); len(got) != v {
			t.Errorf("acknowledgement-count: %d acks %v, want %d", len(got), got, v)
		}
	}
	if v, ok := asInt(e["publication-count"]); ok {
		_, _ = r.broker.WaitPublished(settle(), v)
		if got := len(r.broker.Published()); got != v {
			t.Errorf("publication-count: %d, want %d", got, v)
		}
	}
	for i, m := range asList(e["published-messages"]) {
		r.checkPublished(i, m.(tree))
	}
	if v, ok := asInt(e["execution-count"]); ok {
		if len(r.handlers) != 1 {
			t.Errorf("execution-count with %d executors", len(r.handlers))
		} else if got := r.handlers[0].executions.Load(); got != int64(v) {
			t.Errorf("execution-count: %d, want %d", got, v)
		}
	}
	for k, v := range sub(e, "execution-counts") {
		i, err := strconv.Atoi(k)
		want, _ := asInt(v)
		if err != nil || i < 0 || i >= len(r.handlers) {
			t.Errorf("execution-counts: no executor %q", k)
		} else if got := r.handlers[i].executions.Load(); got != int64(want) {
			t.Errorf("execution-counts[%d]: %d, want %d", i, got, want)
		}
	}

	// Finalization: the executor withdraws its subscriptions (the SDK
	// executor's stop), which is where an epilogue's error is expected.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.exec.Unsubscribe(ctx)
	if catch, ok := e["catch"].(tree); ok {
		if kind, _ := asString(catch["error-kind"]); kind != "mqtt error" {
			t.Fatalf("the harness does not know epilogue error-kind %q", kind)
		}
		checkCatch(t, catch, err, false)
	} else if err != nil {
		t.Errorf("finalization: Unsubscribe: %v", err)
	}
}

// checkPublished checks every response with the expected message's
// correlation data (a duplicate's responses included).
func (r *caseRun) checkPublished(i int, want tree) {
	t := r.t
	if err := checkKeys(want, "published message", "correlation-index", "topic", "payload", "content-type",
		"format-indicator", "metadata", "command-status", "is-application-error", "expiry"); err != nil {
		t.Fatal(err)
	}
	ci, ok := want["correlation-index"]
	if !ok {
		t.Fatalf("published-messages[%d] has no correlation-index", i)
	}
	if ci != nil {
		if n, _ := asInt(ci); r.correlations[n] == nil {
			t.Fatalf("published-messages[%d]: correlation-index %v was never sent", i, ci)
		}
	}
	corr, _ := r.correlation(ci)
	var matched []*packets.Publish
	for _, p := range r.broker.Published() {
		if bytes.Equal(p.Properties.CorrelationData, corr) {
			matched = append(matched, p)
		}
	}
	if len(matched) == 0 {
		t.Errorf("published-messages[%d]: no response with correlation-index %v", i, ci)
		return
	}
	for j, p := range matched {
		where := fmt.Sprintf("published-messages[%d] (response %d of %d with correlation-index %v)", i, j+1, len(matched), ci)
		user := map[string]string{}
		for _, u := range p.Properties.User {
			user[u.Key] = u.Value
		}
		if v, ok := asString(want["topic"]); ok && p.Topic != v {
			t.Errorf("%s: topic %q, want %q", where, p.Topic, v)
		}
		if v, ok := want["payload"]; ok {
			s, _ := asString(v)
			if string(p.Payload) != s {
				t.Errorf("%s: payload %q, want %q", where, p.Payload, s)
			}
		}
		if v, ok := asString(want["content-type"]); ok && p.Properties.ContentType != v {
			t.Errorf("%s: content type %q, want %q", where, p.Properties.ContentType, v)
		}
		if v, ok := asInt(want["format-indicator"]); ok {
			got := 0
			if p.Properties.PayloadFormat != nil {
				got = int(*p.Properties.PayloadFormat)
			}
			if got != v {
				t.Errorf("%s: format indicator %d, want %d", where, got, v)
			}
		}
		for k, v := range sub(want, "metadata") {
			got, has := user[k]
			if s, ok := asString(v); ok && (!has || got != s) {
				t.Errorf("%s: metadata %q = %q (present %t), want %q", where, k, got, has, s)
			} else if v == nil && has {
				t.Errorf("%s: metadata %q = %q, want it absent", where, k, got)
			}
		}
		if v, ok := want["command-status"]; ok {
			got, has := user["__stat"]
			if n, isInt := asInt(v); isInt && got != strconv.Itoa(n) {
				t.Errorf("%s: __stat %q (present %t), want %d; __stMsg %q", where, got, has, n, user["__stMsg"])
			} else if v == nil && has {
				t.Errorf("%s: __stat %q, want none", where, got)
			}
		}
		if v, ok := asBool(want["is-application-error"]); ok {
			got := user["__apErr"]
			if isApp := strings.EqualFold(got, "true"); isApp != v {
				t.Errorf("%s: __apErr %q, want application error %t", where, got, v)
			}
		}
		if v, ok := asInt(want["expiry"]); ok {
			var got uint32
			if p.Properties.MessageExpiry != nil {
				got = *p.Properties.MessageExpiry
			}
			if int(got) != v {
				t.Errorf("%s: message expiry %d, want %d", where, got, v)
			}
		}
	}
}
