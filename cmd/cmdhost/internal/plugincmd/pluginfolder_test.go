package plugincmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// plugin install refuses a name the host would never serve (a dotfile)
// or that is a path, with the fix, and writes nothing (issue 23, item 9:
// `--name .x` reported success).
func TestPluginInstallRefusesNamesTheHostSkips(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "plugins")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		".x":   "the host skips dotfiles in the plugins folder and would never serve it; use a name that does not start with a dot",
		"../x": "not a path",
	} {
		out, errOut, code := clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--plugins", dir, "--name", name)
		if code != 1 || !strings.Contains(errOut, "not installed") || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--name") {
			t.Errorf("install --name %s: exit %d, %q %q; want 1, refused saying %q and naming --name", name, code, out, errOut, want)
		}
	}
	for _, d := range []string{dir, parent} {
		if des, _ := os.ReadDir(d); len(des) > map[string]int{dir: 0, parent: 1}[d] {
			t.Errorf("a refused install wrote into %s: %v", d, des)
		}
	}
}

// plugin install writes the module readable as the folder is, so that a
// host running as another user (the systemd unit's DynamicUser) can read
// what root installed: 0644 masked by the folder's permissions.
func TestPluginInstallModeFollowsTheFolder(t *testing.T) {
	for folder, want := range map[os.FileMode]os.FileMode{0o755: 0o644, 0o750: 0o640, 0o700: 0o600, 0o775: 0o644} {
		dir := filepath.Join(t.TempDir(), "plugins")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, folder); err != nil { // past the umask
			t.Fatal(err)
		}
		if _, errOut, code := clitest.Run(t, "plugin", "install", filepath.Join(clitest.Plugins, "wat-echo.wasm"), "--plugins", dir, "--wait", "0"); code != 0 {
			t.Fatalf("install into a %v folder: %q %d", folder, errOut, code)
		}
		st, err := os.Stat(filepath.Join(dir, "wat-echo.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("installed into a %v folder with mode %v; want %v", folder, got, want)
		}
	}
}

// A FIFO named x.wasm and an operator file linked to /dev/zero do not keep
// serve from serving its other plugins (issue 23, item 9: the FIFO
// blocked the host before it served anything); the log names each file.
func TestServeWithOddFilesInThePluginsFolder(t *testing.T) {
	dir := t.TempDir()
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "wat-echo.wasm"), dir, "wat-echo.wasm")
	testkit.InstallFile(t, filepath.Join(clitest.Plugins, "echo.wasm"), dir, "echo.wasm")
	if err := syscall.Mkfifo(filepath.Join(dir, "x.wasm"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "echo.json")); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lines := make(chan string, 100)
	addr, _ := clitest.StartServeIn(t, dir, func(l string) {
		select {
		case lines <- l:
		default:
		}
	})
	clitest.UntilAnswer(t, "mqtt://"+addr, "wat-echo", "hi", 10*time.Second)
	for _, want := range []string{"x.wasm is a named pipe (FIFO), not a regular file", "echo.json is a character device, not a regular file"} {
		for !strings.Contains(log.String(), want) {
			select {
			case l := <-lines:
				log.WriteString(l + "\n")
			default:
				t.Fatalf("the log does not say %q:\n%s", want, log.String())
			}
		}
	}
}
