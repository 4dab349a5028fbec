package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// `cmdhost version`, `--json` and `--version` report the build: Go, the
// wazero the module requires, the ABI the host speaks.
func TestVersion(t *testing.T) {
	out, errOut, code := run(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"cmdhost ", "\ncommit  ", "\ngo      " + runtime.Version() + "\n", "\nwazero  v1.", fmt.Sprintf("\nabi     %d\n", abi.Version)} {
		if !strings.Contains(out, want) {
			t.Errorf("version prints %q, want %q in it", out, want)
		}
	}
	flag, _, code := run(t, "--version")
	if code != 0 || flag != out {
		t.Errorf("--version: exit %d, %q; want what version prints", code, flag)
	}
	js, _, code := run(t, "version", "--json")
	var v buildVersion
	if err := json.Unmarshal([]byte(js), &v); err != nil || code != 0 {
		t.Fatalf("version --json: exit %d, %q: %v", code, js, err)
	}
	if v.Go != runtime.Version() || !strings.HasPrefix(v.Wazero, "v1.") || v.ABI != abi.Version || v.Version == "" {
		t.Errorf("version --json: %+v", v)
	}
}
