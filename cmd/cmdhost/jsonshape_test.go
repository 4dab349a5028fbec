package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"unicode"
)

// checkJSONShape fails unless out is JSON of the one shape every --json
// of cmdhost has (docs/cli.md): keys in lowerCamelCase, no null (an empty
// list is [] or left out), no string twice in a list.
func checkJSONShape(t *testing.T, what, out string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", what, err, out)
		return
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			t.Errorf("%s: %s is null", what, path)
		case map[string]any:
			for k, e := range x {
				if r := []rune(k); len(r) == 0 || !unicode.IsLower(r[0]) {
					t.Errorf("%s: key %q of %s is not lowerCamelCase", what, k, path)
				}
				walk(path+"."+k, e)
			}
		case []any:
			seen := map[string]bool{}
			for i, e := range x {
				if s, ok := e.(string); ok {
					if seen[s] {
						t.Errorf("%s: %s lists %q twice", what, path, s)
					}
					seen[s] = true
				}
				walk(path+"["+string(rune('0'+i%10))+"]", e)
			}
		}
	}
	walk("$", v)
}

// Every --json that works without a host has the one shape (the host's
// are checked in TestPluginAdmin).
func TestJSONOutputsShareOneShape(t *testing.T) {
	for _, args := range [][]string{
		{"version", "--json"},
		{"plugin", "list", "--json", plugins},
		{"plugin", "inspect", "--json", filepath.Join(plugins, "echo.wasm")},
		{"plugin", "inspect", "--json", filepath.Join(plugins, "wat-echo.wasm")},
		{"plugin", "validate", "--json", filepath.Join(plugins, "echo.wasm"), filepath.Join(plugins, "../plugins-bad/bad-net.wasm")},
	} {
		out, errOut, _ := run(t, args...)
		if out == "" {
			t.Errorf("%v: no output (%s)", args, errOut)
			continue
		}
		checkJSONShape(t, filepath.Base(args[len(args)-1])+" "+args[0], out)
	}
}
