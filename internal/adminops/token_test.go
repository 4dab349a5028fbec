package adminops_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The token file is checked at each op that needs it, and read again when
// it changed (secret.File): the right token
// passes (the op then finds no plugin: 400), a wrong or missing one is
// 403, a rotated file counts at once; each refusal is logged with the
// invoker and why, never with a token.
func TestAdminTokenFile(t *testing.T) {
	m, dir := newManager(t)
	file := filepath.Join(t.TempDir(), "token")
	write := func(tok string) {
		if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first-Token-1")
	var logs testkit.LogBuffer
	clk := testkit.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, TokenFile: file, Token: "ignored-Token",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Clock: clk})
	reload := adminOp(t, a, admin.OpReload)
	call := func(token *string) abi.Status {
		t.Helper()
		clk.Add(time.Second) // each refusal logged: at most one a second is (TestRefusalsBounded)
		payload, _ := json.Marshal(admin.Request{Name: "nothing"})
		r := &abi.Request{Payload: payload, InvokerID: "spy-client"}
		if token != nil {
			r.Metadata = map[string]string{admin.TokenKey: *token}
		}
		resp, err := reload(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		token *string
		want  abi.Status
	}{
		{str("first-Token-1"), abi.StatusBadRequest}, // passed the check: no plugin "nothing"
		{str("wrong-Token-2"), admin.StatusForbidden},
		{str("first-Token-"), admin.StatusForbidden},  // a prefix
		{str("ignored-Token"), admin.StatusForbidden}, // the file wins
		{nil, admin.StatusForbidden},
	} {
		if got := call(c.token); got != c.want {
			t.Errorf("token %v: status %d, want %d", c.token, got, c.want)
		}
	}
	write("rotated-Token-3")
	if got := call(str("first-Token-1")); got != admin.StatusForbidden {
		t.Errorf("the old token after rotation: %d, want 403", got)
	}
	if got := call(str("rotated-Token-3")); got != abi.StatusBadRequest {
		t.Errorf("the rotated token: %d, want it to pass (400)", got)
	}
	log := logs.String()
	t.Log(log)
	if strings.Contains(log, "Token") {
		t.Errorf("a token is in the log:\n%s", log)
	}
	if n := strings.Count(log, `msg="admin op refused" op=reload invoker=spy-client why="wrong token"`); n != 4 {
		t.Errorf("%d refusals for a wrong token logged with the invoker, want 4:\n%s", n, log)
	}
	if !strings.Contains(log, `invoker=spy-client why="no token"`) {
		t.Errorf("the refusal without a token is not logged:\n%s", log)
	}

	// A file the host cannot read refuses, and says so in the log.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if got := call(str("rotated-Token-3")); got != admin.StatusForbidden {
		t.Errorf("no token file: %d, want 403", got)
	}
	if !logs.Contains("admin token unreadable") {
		t.Errorf("an unreadable token file is not logged:\n%s", logs.String())
	}
	// ... and one missing at the start is an error that names it.
	if _, err := adminops.New(adminops.Config{Manager: m, Dir: dir, TokenFile: file}); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("New with a missing token file: %v", err)
	}
}

// A flood of refused ops (anyone who may publish on the admin topics can
// send them) is one log line and one audit event a second, the next
// saying how many were left out; each is still refused.
func TestRefusalsBounded(t *testing.T) {
	m, dir := newManager(t)
	var logs testkit.LogBuffer
	var audits []events.Event
	clk := testkit.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Token: "the-Token", Clock: clk,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Events: events.SinkFunc(func(ev events.Event) { audits = append(audits, ev) })})
	remove := adminOp(t, a, admin.OpRemove)
	flood := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			resp, err := remove(context.Background(), &abi.Request{Payload: []byte(`{"name":"x"}`), InvokerID: "flooder",
				Metadata: map[string]string{admin.TokenKey: "guess"}})
			if err != nil || resp.Status != admin.StatusForbidden {
				t.Fatalf("a wrong token: %+v, %v; want 403", resp, err)
			}
			clk.Add(time.Millisecond)
		}
	}
	flood(500) // half a second
	if n := strings.Count(logs.String(), "admin op refused"); n != 1 || len(audits) != 1 {
		t.Fatalf("500 refusals in half a second: %d log lines, %d audit events; want 1 and 1:\n%s", n, len(audits), logs.String())
	}
	clk.Add(time.Second)
	flood(1)
	if !logs.HasLine("admin op refused", "refusals_not_logged=499") {
		t.Errorf("the line after the flood does not count the 499 left out:\n%s", logs.String())
	}
	if len(audits) != 2 || !strings.Contains(audits[1].Reason, "and 499 refusals before it not logged") {
		t.Errorf("audit events %+v: want the second to count the 499 left out", audits)
	}
}

// A token file that can no longer be read refuses every guarded op, and
// says so in the log at most once a second, not once per request.
func TestUnreadableTokenFileLogBounded(t *testing.T) {
	m, dir := newManager(t)
	var logs testkit.LogBuffer
	clk := testkit.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("the-Token"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, TokenFile: file, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	remove := adminOp(t, a, admin.OpRemove)
	for range 200 {
		resp, err := remove(context.Background(), &abi.Request{Payload: []byte(`{"name":"x"}`),
			Metadata: map[string]string{admin.TokenKey: "the-Token"}})
		if err != nil || resp.Status != admin.StatusForbidden {
			t.Fatalf("with the token file gone: %+v, %v; want 403", resp, err)
		}
		clk.Add(time.Millisecond)
	}
	if n := strings.Count(logs.String(), "admin token unreadable"); n != 1 {
		t.Fatalf("200 ops in 0.2 s with the token file gone: %d lines saying so, want 1:\n%s", n, logs.String())
	}
}

// An install by identity is logged once, at its first chunk, not at each.
func TestIdentityInstallLoggedOnce(t *testing.T) {
	m, dir := newManager(t)
	var logs testkit.LogBuffer
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Admin: func(c abi.Caller) bool { return c.User == "alice" }})
	install := adminOp(t, a, admin.OpInstall)
	module := []byte("\x00asm\x01\x00\x00\x00 not a plugin, 3 chunks of it")
	sum := sha256.Sum256(module)
	for off := 0; off < len(module); off += 12 {
		end := min(off+12, len(module))
		resp, err := install(context.Background(), &abi.Request{Payload: module[off:end],
			Caller: abi.Caller{User: "alice", ClientID: "alice-cli"},
			Metadata: map[string]string{admin.InstallNameKey: "x", admin.InstallDigestKey: hex.EncodeToString(sum[:]),
				admin.InstallSizeKey: strconv.Itoa(len(module)), admin.InstallOffsetKey: "0" + strconv.Itoa(off)}}) // "00": still the first chunk
		if err != nil || resp.Status == admin.StatusForbidden {
			t.Fatalf("chunk at %d by identity: %+v, %v", off, resp, err)
		}
	}
	if n := strings.Count(logs.String(), "admin op allowed by identity"); n != 1 {
		t.Errorf("an install of 3 chunks by identity logged %d times, want once:\n%s", n, logs.String())
	}
}

// A host started without an admin token can never pass the check: a
// request without a token (what a user of the quickstart's host sends
// first) is told that, with the fix, not to add a token it cannot have
// (issue 39's walk-through: "missing admin token" sent them to make one).
func TestNoTokenOnHostSaysSo(t *testing.T) {
	m, dir := newManager(t)
	a := newOps(t, adminops.Config{Manager: m, Dir: dir})
	remove := adminOp(t, a, admin.OpRemove)
	for _, md := range []map[string]string{nil, {admin.TokenKey: "some-Token"}} {
		resp, err := remove(context.Background(), &abi.Request{Payload: []byte(`{"name":"x"}`), InvokerID: "new-user", Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != admin.StatusForbidden || !strings.Contains(resp.Message, "the host has no admin token: start `cmdhost serve --admin-token-file FILE`") {
			t.Errorf("token %v on a host without one: %d %q; want 403 saying the host has none", md, resp.Status, resp.Message)
		}
	}
}
