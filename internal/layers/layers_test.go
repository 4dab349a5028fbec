// Package layers holds one test: every import arrow between the module's
// packages points down the layers of docs/architecture.md. A package may
// import the packages of lower layers (and its own subpackages), never one
// of its own layer or above; test support is imported by tests only.
//
// The table below is the one in docs/architecture.md: a new package must
// be given its layer here, or the test fails and says so.
package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cmdhost/cmdhost"

// layer ranks each package: a higher rank sits above. Packages of one
// rank are siblings and may not import each other.
var layer = map[string]int{
	"cmd/cmdhost": 100,

	// cmd/cmdhost's packages (cmd/cmdhost/internal/…): the command tree
	// over the command groups over what they share.
	"cmd/cmdhost/internal/app": 99,

	"cmd/cmdhost/internal/devcmd": 98,

	"cmd/cmdhost/internal/clientcmd":   97,
	"cmd/cmdhost/internal/plugincmd":   97,
	"cmd/cmdhost/internal/servecmd":    97,
	"cmd/cmdhost/internal/exactlyonce": 97, // servecmd's longest tests; nothing else
	"cmd/cmdhost/internal/statecmd":    97,

	"cmd/cmdhost/internal/hostconn": 96,
	"cmd/cmdhost/internal/registry": 96,

	"cmd/cmdhost/internal/base": 95,

	"host": 90,

	"internal/adminops": 80,
	"internal/nested":   80,

	"host/admin": 75,

	"internal/metrics": 70,

	"internal/commands": 65,

	"internal/outbox": 64,

	"internal/stateaio": 63,

	"internal/gate":       62,
	"internal/statestore": 62,

	"internal/trigger": 61,

	"internal/rpc": 60,

	"internal/session": 55,

	"plugins": 50,

	"internal/wasm":   40,
	"cache":           40,
	"internal/broker": 40,

	"internal/state": 38,

	"internal/wasm/meter": 35,

	"internal/events":  30,
	"internal/httpout": 30,
	"internal/otlp":    30,
	"internal/oci":     30,
	"internal/signing": 30,

	"internal/hlc":       20,
	"internal/wasmbin":   20,
	"internal/topic":     20,
	"internal/ratelog":   20,
	"internal/regfile":   20,
	"internal/buildinfo": 20,
	"internal/clock":     18,
	"internal/logx":      18,
	"internal/setting":   18,
	"internal/bytesize":  18,
	"internal/redact":    18,
	"internal/secret":    18,
	"internal/passwd":    18,
	"internal/jwt":       18,

	"sdk": 15,
	"abi": 10,
}

// support is test support: it may import any layer but cmd, and only
// tests and benchmarks import it.
var support = []string{"internal/testkit", "internal/state/statetest", "internal/bench", "internal/rpc/rpctest", "internal/broker/brokertest", "internal/oci/ocitest", "internal/layers", "internal/testprogress", "cmd/cmdhost/internal/clitest"}

func isSupport(pkg string) bool {
	for _, s := range support {
		if pkg == s || strings.HasPrefix(pkg, s+"/") {
			return true
		}
	}
	return false
}

func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go list over the whole module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		from := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if strings.HasPrefix(from, "testdata/") || strings.HasPrefix(from, "third_party/") {
			continue
		}
		fromRank, known := layer[from]
		if !known && !isSupport(from) {
			t.Errorf("%s has no layer: add it to the table in internal/layers and docs/architecture.md", from)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			switch {
			case strings.HasPrefix(to, "third_party/"):
			case isSupport(from):
				if to == "cmd/cmdhost" || strings.HasPrefix(to, "cmd/cmdhost/") && !isSupport(to) {
					t.Errorf("test support %s imports %s", from, to)
				}
			case isSupport(to):
				t.Errorf("%s imports test support %s: only tests may", from, to)
			case strings.HasPrefix(to, from+"/"):
				// its own subpackage
			case layer[to] >= fromRank:
				t.Errorf("%s (layer %d) imports %s (layer %d): arrows must point down", from, fromRank, to, layer[to])
			}
		}
	}
}
