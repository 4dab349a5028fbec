package adminops_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/wasmtest"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// The token file is read at each op that needs it: the right token
// passes (the op then finds no plugin: 400), a wrong or missing one is
// 403, a rotated file counts at once; each refusal is logged with the
// invoker and why, never with a token.
func TestAdminTokenFile(t *testing.T) {
	e, err := wasmtest.NewEngine(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	dir := t.TempDir()
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: e})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	file := filepath.Join(t.TempDir(), "token")
	write := func(tok string) {
		if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first-Token-1")
	var logs testkit.LogBuffer
	a := newOps(t, adminops.Config{Manager: m, Dir: dir, TokenFile: file, Token: "ignored-Token",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	reload := adminOp(t, a, admin.OpReload)
	call := func(token *string) abi.Status {
		t.Helper()
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
