package plugins

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

func TestOperatorState(t *testing.T) {
	op, err := ParseOperator("dev.json", []byte(`{"state": {"maxKeys": 10, "maxBytes": 4096, "commitErrors": true,
		"shared": {"devices": "read", "jobs": "read-write"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := op.pluginConfig(wasm.PluginConfig{}).Grants.State
	if g.Own.MaxKeys != 10 || g.Own.MaxBytes != 4096 || !g.CommitErrors ||
		g.Shared["devices"] != wasm.StateRead || g.Shared["jobs"] != wasm.StateReadWrite || len(g.Shared) != 2 {
		t.Fatalf("grant %+v", g)
	}
	if c := Resolve("dev", abi.Command{Name: "set"}, op, Defaults{}); !c.CommitErrors {
		t.Fatal("commitErrors does not reach the command")
	}
	for file, want := range map[string]string{
		`{"state": {"shared": {"devices": "write"}}}`: `dev.json: "state.shared.devices": access "write": give "read" or "read-write"`,
		`{"state": {"shared": {"dev/ices": "read"}}}`: `shared namespace "dev/ices": use letters, digits`,
		`{"state": {"maxkeys": 3}}`:                   `did you mean "maxKeys"?`,
		`{"state": {"maxBytes": 0}}`:                  `"state.maxBytes"`,
		`{"state": {"commitErrors": "yes"}}`:          `"state.commitErrors": is a string: write true or false`,
		`{"state": []}`:                               `"state": is a list: write an object`,
	} {
		_, err := ParseOperator("dev.json", []byte(file))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}
