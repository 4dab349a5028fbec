package nested_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// kitLanguages are the guest languages the kit runs on: a test plugin of
// each in testdata/plugins-kit (testdata/kit/README.md).
var kitLanguages = []string{"go", "rust", "c", "as"}

// TestGuestKit runs one table of behaviours against the kit's test plugin
// in each guest language, on a host with nested calls: what a handler in
// any language can do, and how the host sees it.
func TestGuestKit(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	for _, lang := range kitLanguages {
		t.Run(lang, func(t *testing.T) {
			var log testkit.LogBuffer
			file := "../plugins-kit/kit-" + lang
			h := newNestHostWith(t, "kit-host", wasm.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))},
				wasm.PluginConfig{PoolSize: 4, Config: map[string]string{"greeting": "hello from the operator"}}, file)
			p := h.plugins[file]
			call := func(command, payload, contentType string, md map[string]string, timeout time.Duration) (*abi.Response, error) {
				t.Helper()
				ctx, cancel := context.WithTimeout(ctxT(t), timeout)
				defer cancel()
				return p.Invoke(ctx, &abi.Request{Command: command, Payload: []byte(payload), ContentType: contentType,
					Metadata: md, ExecutorID: "kit-host", CorrelationID: parentCorrelation})
			}
			ok := func(command, payload string) *abi.Response {
				t.Helper()
				resp, err := call(command, payload, "text/plain", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusOK {
					t.Fatalf("%s %q: %+v, %v", command, payload, resp, err)
				}
				return resp
			}

			t.Run("description", func(t *testing.T) {
				d := p.Description()
				var names []string
				for _, c := range d.Commands {
					names = append(names, c.Name)
				}
				want := "kit-caller kit-config kit-deadline kit-echo kit-error kit-fan kit-http kit-idem kit-log kit-nest kit-publish kit-state kit-status kit-trap kit-var kit.device.any.all"
				if !slices.Contains(publishKitLanguages, lang) {
					want = strings.Replace(want, " kit-publish", "", 1)
				}
				if !slices.Contains(httpKitLanguages, lang) {
					want = strings.Replace(want, " kit-http", "", 1)
				}
				if !slices.Contains(triggerKitLanguages, lang) {
					want = strings.Replace(want, " kit.device.any.all", "", 1)
				}
				if got := strings.Join(slices.Sorted(slices.Values(names)), " "); got != want {
					t.Fatalf("commands %s; want %s", got, want)
				}
				idem, deadline := d.Command("kit-idem"), d.Command("kit-deadline")
				if !idem.Idempotent || idem.ResponseTTL != time.Minute || strings.Join(idem.ContentTypes, ",") != "text/plain" || idem.Timeout != 2*time.Second {
					t.Errorf("kit-idem: %+v", idem)
				}
				if deadline.Idempotent || deadline.Timeout != 300*time.Millisecond {
					t.Errorf("kit-deadline: %+v", deadline)
				}
			})
			t.Run("echo", func(t *testing.T) {
				resp, err := call("kit-echo", "héllo\x00bytes", "application/x-kit", map[string]string{"k": "v", "trace": "1"}, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusOK || string(resp.Payload) != "héllo\x00bytes" || resp.ContentType != "application/x-kit" ||
					resp.Metadata["k"] != "v" || resp.Metadata["trace"] != "1" {
					t.Fatalf("%+v, %v", resp, err)
				}
				if resp := ok("kit-echo", ""); len(resp.Payload) != 0 {
					t.Fatalf("empty echo: %+v", resp)
				}
			})
			t.Run("caller", func(t *testing.T) {
				for caller, want := range map[abi.Caller]string{
					{User: "alice", ClientID: "alice-1"}: "user=alice;client=alice-1",
					{ClientID: "anon-1"}:                 "user=;client=anon-1",
					{}:                                   "user=;client=",
				} {
					resp, err := p.Invoke(ctxT(t), &abi.Request{Command: "kit-caller", ExecutorID: "kit-host",
						CorrelationID: parentCorrelation, InvokerID: "claimed", Caller: caller})
					if err != nil || resp.Code() != abi.StatusOK || string(resp.Payload) != want {
						t.Errorf("%v: %+v, %v; want %q", caller, resp, err, want)
					}
				}
			})
			t.Run("application error", func(t *testing.T) {
				resp, err := call("kit-error", "", "", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusInternalError || !resp.AppError || resp.Message != "kit: deliberate failure" {
					t.Fatalf("%+v, %v", resp, err)
				}
			})
			t.Run("statuses", func(t *testing.T) {
				resp, err := call("kit-status", "400", "text/plain", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusBadRequest || resp.AppError || resp.Message != "kit: bad payload" {
					t.Errorf("400: %+v, %v", resp, err)
				}
				resp, err = call("kit-status", "415", "application/x-odd", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusUnsupportedType || resp.PropName != "Content Type" || resp.PropValue != "application/x-odd" {
					t.Errorf("415: %+v, %v", resp, err)
				}
				resp, err = call("kit-status", "other", "text/plain", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusNoContent || len(resp.Payload) != 0 {
					t.Errorf("204: %+v, %v", resp, err)
				}
			})
			t.Run("declared content types", func(t *testing.T) {
				if resp := ok("kit-idem", "same"); string(resp.Payload) != "same" {
					t.Errorf("kit-idem: %+v", resp)
				}
				resp, err := call("kit-idem", "x", "application/json", nil, 10*time.Second)
				if err != nil || resp.Code() != abi.StatusUnsupportedType {
					t.Errorf("kit-idem with application/json: %+v, %v; want the host's 415", resp, err)
				}
			})
			t.Run("config", func(t *testing.T) {
				if resp := ok("kit-config", "greeting"); string(resp.Payload) != "hello from the operator" {
					t.Errorf("greeting: %+v", resp)
				}
				resp, err := call("kit-config", "absent", "text/plain", nil, 10*time.Second)
				if err != nil || !resp.AppError || resp.Message != "kit: no config absent" {
					t.Errorf("absent: %+v, %v", resp, err)
				}
			})
			t.Run("variables", func(t *testing.T) {
				for want := 1; want <= 3; want++ {
					if resp := ok("kit-var", "add"); string(resp.Payload) != strconv.Itoa(want) {
						t.Fatalf("add #%d: %q", want, resp.Payload)
					}
				}
				if resp := ok("kit-var", "a value"); string(resp.Payload) != "a value" {
					t.Errorf("set and get: %q", resp.Payload)
				}
			})
			t.Run("log", func(t *testing.T) {
				ok("kit-log", "a line from kit-"+lang)
				if !log.Contains("msg=\"a line from kit-"+lang+"\"") || !log.Contains("plugin=kit-"+lang) {
					t.Errorf("the host log lacks the guest's line:\n%s", log.String())
				}
			})
			t.Run("nested call", func(t *testing.T) {
				if resp := ok("kit-nest", "through kit-echo"); string(resp.Payload) != "through kit-echo" {
					t.Errorf("%+v", resp)
				}
			})
			t.Run("fan-out", func(t *testing.T) {
				if resp := ok("kit-fan", "p"); string(resp.Payload) != "a=p-a;b=p-b" {
					t.Errorf("%q", resp.Payload)
				}
			})
			t.Run("trap", func(t *testing.T) {
				_, err := call("kit-trap", "", "", nil, 10*time.Second)
				var werr *wasm.Error
				if !errors.As(err, &werr) || werr.Kind != wasm.KindTrap {
					t.Fatalf("err %v; want a trap", err)
				}
				// The error's first line, which a caller's 500 quotes, is
				// the guest's panic message where the language prints one
				// (a C __builtin_trap or an AssemblyScript unreachable()
				// prints nothing).
				first, _, _ := strings.Cut(err.Error(), "\n")
				t.Logf("first line: %s", first)
				if printsPanic := lang == "go" || lang == "rust"; printsPanic && !strings.Contains(first, "kit: deliberate trap") {
					t.Errorf("the first line of the error does not quote the guest's panic: %q", first)
				}
				ok("kit-echo", "after the trap") // the instance was replaced
			})
			t.Run("deadline", func(t *testing.T) {
				if resp := ok("kit-deadline", "remaining"); string(resp.Payload) != "ok" {
					t.Errorf("remaining: %+v", resp)
				}
				start := time.Now()
				_, err := call("kit-deadline", "spin", "", nil, 300*time.Millisecond)
				var werr *wasm.Error
				if !errors.As(err, &werr) || werr.Kind != wasm.KindDeadline {
					t.Fatalf("err %v after %v; want the deadline to cut the spin", err, time.Since(start))
				}
			})
		})
	}
}
