package devcmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/plugincmd"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

func DevCommand() *cli.Command {
	return &cli.Command{
		Name:      "dev",
		Usage:     "rebuild a handler project on every change and install it into a host's plugins folder",
		ArgsUsage: "[DIR]",
		Description: "Watches the handler project in DIR (default: the current folder; one made by\n" +
			"cmdhost new, or any with a cmdhost.json, or a Makefile whose default target builds\n" +
			"NAME.wasm). At the start and after every change it builds as cmdhost build does\n" +
			"(the manifest's build command; without one, make), loads the module as the\n" +
			"host would, and installs it into --plugins as plugin install does (a module\n" +
			"whose command or topic another plugin there serves is refused, not copied),\n" +
			"then waits up to --wait for the running host (--broker, --executor) to serve\n" +
			"the new version or refuse it, and prints what it saw. Each step is printed; a\n" +
			"build that fails prints the compiler's output and installs nothing. Ctrl-C\n" +
			"stops.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "plugins", Usage: "plugins `DIR` of the host", Required: true, EnvVars: []string{"CMDHOST_PLUGINS"}},
			&cli.StringFlag{Name: "name", Usage: "the module: NAME.wasm in the project, installed as NAME.wasm (default: the project folder's name)"},
			&cli.DurationFlag{Name: "debounce", Value: 300 * time.Millisecond, Usage: "how long the project stays quiet before a rebuild"},
			&cli.BoolFlag{Name: "once", Usage: "build, check and install once, then exit (status 1 when a step failed or the host refused the module)"},
		}, plugincmd.VerdictFlags()...),
		Action: runDev,
	}
}

func runDev(c *cli.Context) error {
	if c.NArg() > 1 {
		return cli.Exit("dev takes at most one project folder: cmdhost dev [DIR] --plugins DIR", base.ExitUsage)
	}
	dir, err := filepath.Abs(cmp.Or(c.Args().First(), "."))
	if err != nil {
		return err
	}
	m, err := devManifest(dir, c.String("name"))
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	plugins := c.String("plugins")
	if st, err := os.Stat(plugins); err != nil || !st.IsDir() {
		return cli.Exit(fmt.Sprintf("--plugins %s: not a directory", plugins), base.ExitUsage)
	}
	if c.Duration("debounce") <= 0 {
		return cli.Exit("--debounce must be positive, e.g. --debounce 300ms", base.ExitUsage)
	}
	e, err := base.NewEngine(c)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := m.Name
	// One offline view of the folder for the whole session: each round
	// loads only the files changed since the round before.
	folder, closeFolder := plugincmd.FolderManager(e, plugins, pluginmgr.Defaults{ExecTimeout: pluginmgr.NoTimeout})
	defer closeFolder()
	d := &devLoop{dir: dir, m: m, out: c.App.Writer,
		install: func(src string) (plugincmd.Installed, error) {
			return plugincmd.InstallModule(c, e, src, plugins, name, folder)
		},
		verdict: func(in plugincmd.Installed) (string, error) {
			return plugincmd.HostVerdict(ctx, c, in.Name, in.Digest, plugins)
		}}
	if c.Bool("once") {
		if !d.round(ctx) {
			return cli.Exit("", base.ExitFailed)
		}
		return nil
	}
	output := filepath.Base(m.Wasm)
	changes, err := watchProject(ctx, dir, c.Duration("debounce"), output)
	if err != nil {
		return err
	}
	// The sources as the last round began: a notification whose sources
	// are the same was the build's own files (the Go linker's
	// NAME.wasm-go-tmp-umask, rustc's objects), made and gone; a source
	// saved during a build differs, and is built next.
	built := projectSources(dir, output)
	d.round(ctx)
	fmt.Fprintf(d.out, "watching %s for changes (Ctrl-C to stop)\n", dir)
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changes:
			if !ok {
				return nil
			}
			now := projectSources(dir, output)
			changed := now.changedFrom(built)
			if changed == "" {
				continue
			}
			fmt.Fprintf(d.out, "\nchanged: %s\n", changed)
			built = now
			d.round(ctx)
			fmt.Fprintf(d.out, "watching %s for changes (Ctrl-C to stop)\n", dir)
		}
	}
}

// devLoop is one project under cmdhost dev: its folder, its manifest
// (how it builds, its module), where it prints, how its module is
// checked and installed (installModule, into the host's folder) and how
// the host's verdict on it is had (hostVerdict).
type devLoop struct {
	dir     string
	m       manifest
	out     io.Writer
	install func(src string) (plugincmd.Installed, error)
	verdict func(plugincmd.Installed) (string, error)
}

// round builds the project, then checks and installs its module; it
// prints each step and reports whether all went well. ctx's end stops
// the build.
func (d *devLoop) round(ctx context.Context) bool {
	start := time.Now()
	fmt.Fprintf(d.out, "building: %s in %s\n", d.m.Build, d.dir)
	var output bytes.Buffer
	src, err := buildProject(ctx, d.dir, d.m, &output)
	var failed *buildFailure
	switch {
	case errors.As(err, &failed):
		fmt.Fprintf(d.out, "build failed (%v), nothing installed:\n%s", err, indent(output.String()))
		return false
	case err != nil: // a toolchain missing, or no module made
		fmt.Fprintf(d.out, "%v; nothing installed\n", err)
		return false
	}
	fmt.Fprintf(d.out, "built %s in %v\n", src, time.Since(start).Round(time.Millisecond))
	in, err := d.install(src)
	var invalid *plugincmd.InvalidModule
	var clash *plugincmd.ClashModule
	switch {
	case errors.As(err, &invalid):
		fmt.Fprintf(d.out, "invalid: %v; nothing installed\n", invalid.Err)
		return false
	case errors.As(err, &clash):
		fmt.Fprintf(d.out, "refused: %v; nothing installed\n", clash)
		return false
	case err != nil:
		fmt.Fprintf(d.out, "not installed: %v\n", err)
		return false
	}
	fmt.Fprintf(d.out, "valid: %d command(s) (%s)\ninstalled as %s\n", len(in.Commands), strings.Join(in.Commands, ", "), in.Dst)
	line, err := d.verdict(in)
	if err != nil {
		fmt.Fprintf(d.out, "%v\n", err)
		return false
	}
	fmt.Fprintln(d.out, line)
	return true
}

// indent indents text by two spaces, for a build's output under its line.
func indent(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		b.WriteString("  " + line)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// skipDirs are the folders of a project that are build output or
// downloads, not sources: never watched.
var skipDirs = map[string]bool{"node_modules": true, "target": true, ".git": true}

// skipFiles are files a build writes in the project: not sources.
var skipFiles = map[string]bool{"package-lock.json": true, "Cargo.lock": true}

// isSource says whether the file base, in a watched folder of a project
// whose module is output, is a source: not hidden, not a module, not
// what a build writes.
func isSource(base, output string) bool {
	return !strings.HasPrefix(base, ".") && !strings.HasSuffix(base, ".wasm") && base != output && !skipFiles[base]
}

// sources is what a project's source files were at one moment: each
// one's size and modification time, by path.
type sources map[string]sourceStamp

type sourceStamp struct {
	size int64
	mod  time.Time
}

// projectSources reads the sources of the project in dir (the folders
// watchProject watches, the files isSource keeps); a file that cannot
// be read is left out.
func projectSources(dir, output string) sources {
	s := sources{}
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case e.IsDir():
			if path != dir && (skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		case !isSource(e.Name(), output):
			return nil
		}
		if info, err := e.Info(); err == nil {
			s[path] = sourceStamp{size: info.Size(), mod: info.ModTime()}
		}
		return nil
	})
	return s
}

// changedFrom returns a source that differs between s and before
// (changed, made or deleted), or "" when none does.
func (s sources) changedFrom(before sources) string {
	for path, st := range s {
		if b, ok := before[path]; !ok || b.size != st.size || !b.mod.Equal(st.mod) {
			return path
		}
	}
	for path := range before {
		if _, ok := s[path]; !ok {
			return path
		}
	}
	return ""
}

// watchProject watches dir and its folders (build output and hidden ones
// excepted) and sends, once the project has been quiet for debounce after
// a change, the path of a changed file. Changes to the module built
// (output), to hidden files, to *.wasm and to what a build writes
// (skipFiles) are not sources and are ignored. The channel closes when
// ctx ends.
func watchProject(ctx context.Context, dir string, debounce time.Duration, output string) (<-chan string, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	add := func(root string) error {
		return filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if path != root && (skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".")) {
				return filepath.SkipDir
			}
			return w.Add(path)
		})
	}
	if err := add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching %s: %w", dir, err)
	}
	out := make(chan string)
	// One goroutine owns the watcher and the debounce timer; it ends with
	// ctx and closes out.
	go func() {
		defer close(out)
		defer w.Close()
		var timer *time.Timer
		var fire <-chan time.Time
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				base := filepath.Base(ev.Name)
				if !isSource(base, output) {
					continue
				}
				if ev.Has(fsnotify.Create) {
					if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipDirs[base] {
						_ = add(ev.Name) // a new source folder
					}
				}
				last = ev.Name
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			case <-fire:
				fire = nil
				select {
				case out <- last:
				case <-ctx.Done():
					return
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				fmt.Fprintf(os.Stderr, "cmdhost dev: watching: %v\n", err)
			}
		}
	}()
	return out, nil
}
