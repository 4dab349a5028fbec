package servecmd

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// checkPluginsDir says what is wrong with dir as serve's --plugins: a
// folder that does not exist (with the command that makes it: a typo and
// a folder not made yet look alike, and "not a directory" suggested the
// path was a file), a path that is no folder, or one that cannot be read.
func checkPluginsDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--plugins %s: no such folder: create it with mkdir -p %s, or give the folder of your plugins", dir, dir)
	case err != nil:
		return fmt.Errorf("--plugins %s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("--plugins %s: not a directory: give the folder that holds the NAME.wasm files", dir)
	}
	return nil
}

// warnIfNoModules logs a warning when dir holds no module the host would
// load (NAME.wasm, not hidden): a host that serves nothing would otherwise
// look healthy, and the usual cause is the wrong folder. Not an error: a
// host may start empty and be given plugins while it runs.
func warnIfNoModules(log *slog.Logger, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || log == nil {
		return // the host reports a folder it cannot read
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".wasm"); ok && pluginmgr.CheckName(name) == nil {
			return // the folder's own rule of what it serves
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	log.Warn("the plugins folder has no module: nothing is served until a NAME.wasm is put there (cmdhost plugin install FILE.wasm --plugins DIR)", "dir", abs)
}
