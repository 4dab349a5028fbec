package clientcmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

// `cmdhost version`, `--json` and `--version` report the build: Go, the
// wazero the module requires, the ABI the host speaks.
func TestVersion(t *testing.T) {
	out, errOut, code := clitest.Run(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"cmdhost ", "\ncommit  ", "\ngo      " + runtime.Version() + "\n", "\nwazero  v1.", fmt.Sprintf("\nabi     %d\n", abi.Version)} {
		if !strings.Contains(out, want) {
			t.Errorf("version prints %q, want %q in it", out, want)
		}
	}
	flag, _, code := clitest.Run(t, "--version")
	if code != 0 || flag != out {
		t.Errorf("--version: exit %d, %q; want what version prints", code, flag)
	}
	js, _, code := clitest.Run(t, "version", "--json")
	var v base.BuildVersion
	if err := json.Unmarshal([]byte(js), &v); err != nil || code != 0 {
		t.Fatalf("version --json: exit %d, %q: %v", code, js, err)
	}
	if v.Go != runtime.Version() || !strings.HasPrefix(v.Wazero, "v1.") || v.ABI != abi.Version || v.Version == "" {
		t.Errorf("version --json: %+v", v)
	}
}

// version --executor asks the running host for its version and prints it
// after this binary's; version described "what is running" but printed
// only the local binary's.
func TestVersionOfARunningHost(t *testing.T) {
	addr, _ := clitest.StartServeIn(t, t.TempDir(), nil)
	broker := "mqtt://" + addr
	local, _, _ := clitest.Run(t, "version")
	out, errOut, code := clitest.Run(t, "version", "--executor", "cli-host", "--broker", broker)
	want := "this binary:\n" + local + "\nhost cli-host on " + broker + ":\n" + local // the host runs this binary
	if code != 0 || out != want {
		t.Errorf("version --executor: status %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	js, errOut, code := clitest.Run(t, "version", "--json", "--executor", "cli-host", "--broker", broker)
	var both hostVersions
	if err := json.Unmarshal([]byte(js), &both); err != nil || code != 0 || both.Host != both.Binary || both.Executor != "cli-host" || both.Host.ABI != abi.Version {
		t.Errorf("version --json --executor: status %d, %q %q: %v", code, js, errOut, err)
	}
	clitest.CheckJSONShape(t, "version --executor", js)
	if _, errOut, code := clitest.Run(t, "version", "--executor", "nobody", "--broker", broker, "--timeout", "2s"); code != base.ExitNoExecutor {
		t.Errorf("version --executor of no host: status %d, %q; want 4", code, errOut)
	}
}
