package main

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"go/build"
	"go/format"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
)

// sdkModule is the module a handler project requires for the SDK.
const sdkModule = "github.com/cmdhost/cmdhost"

// placeholderVersion is the version a handler project requires when this
// binary has no released one: the module is not published, so the replace
// line decides which code is used, not the version.
const placeholderVersion = "v0.0.0-00010101000000-000000000000"

//go:embed template/*.tmpl
var projectTemplates embed.FS

func newCommand() *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "make a handler project: a Go module that builds into a plugin",
		ArgsUsage: "NAME",
		Description: "Writes DIR/NAME/ with go.mod, main.go (the command NAME, an echo), main_test.go,\n" +
			"a Makefile (make build → NAME.wasm) and a README.md on building, installing and\n" +
			"calling it. NAME must be a command name and a Go module path element.\n\n" +
			"The cmdhost module is not published, so go.mod needs a replace line pointing at\n" +
			"a cmdhost source tree: it gets one when --cmdhost-src gives that tree.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: ".", Usage: "make the project in `DIR`/NAME"},
			&cli.StringFlag{Name: "cmdhost-src", Usage: "cmdhost source tree `DIR` for go.mod's replace line", EnvVars: []string{"CMDHOST_SRC"}},
		},
		Action: runNew,
	}
}

// project is what the templates are executed with.
type project struct {
	Name       string
	GoVersion  string
	SDKModule  string
	SDKVersion string
	Replace    string // absolute path of a cmdhost source tree, or ""
}

func runNew(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("new needs one name: cmdhost new NAME [--dir DIR]", 2)
	}
	p := project{Name: c.Args().First(), GoVersion: "1.26", SDKModule: sdkModule, SDKVersion: sdkVersion()}
	if err := checkProjectName(p.Name); err != nil {
		return cli.Exit(err, 2)
	}
	if src := c.String("cmdhost-src"); src != "" {
		var err error
		if p.Replace, err = cmdhostSource(src); err != nil {
			return cli.Exit(err, 2)
		}
	}
	target := filepath.Join(c.String("dir"), p.Name)
	if err := checkTarget(target); err != nil {
		return cli.Exit(err, 2)
	}
	files, err := renderProject(p)
	if err != nil {
		return err
	}
	if err := writeProject(c.String("dir"), target, files); err != nil {
		return err
	}

	w := c.App.Writer
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	fmt.Fprintf(w, "created %s: %s\n\nnext:\n  cd %s\n  go mod tidy\n  make build\n  cmdhost call %s.wasm %s -d hi\n",
		target+string(filepath.Separator), strings.Join(names, " "), target, p.Name, p.Name)
	if p.Replace == "" {
		fmt.Fprintf(c.App.ErrWriter, "note: %s is not published and go.mod has no replace line for it: "+
			"add one (see %s) or run cmdhost new again with --cmdhost-src DIR\n",
			sdkModule, filepath.Join(target, "README.md"))
	}
	return nil
}

// modulePathElement is what a Go module path element may hold, without
// '~' (the shell expands it): ASCII letters, digits, '-', '_' and '.'.
var modulePathElement = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// checkProjectName checks that name can be a command name and a Go module
// path (a single element), so both go.mod and the host accept it.
func checkProjectName(name string) error {
	if err := abi.ValidateCommandName(name); err != nil {
		msg := strings.TrimPrefix(err.Error(), abi.ErrMalformed.Error()+": ")
		return fmt.Errorf("%q is not a valid command name: %s", name, msg)
	}
	bad := func(why string) error {
		return fmt.Errorf("%q cannot be a Go module path: %s", name, why)
	}
	switch {
	case !modulePathElement.MatchString(name):
		return bad("use only ASCII letters, digits, '-', '_' and '.'")
	case name[0] == '.' || name[0] == '-':
		return bad("it may not start with '.' or '-'")
	case name[len(name)-1] == '.':
		return bad("it may not end with '.'")
	case windowsReserved(name):
		return bad("it is a reserved file name on Windows")
	case slices.Contains(goReserved, name):
		return bad("the go command reserves that name (a package pattern, or main), so it could not build or test the project")
	case stdPackage(name):
		return bad("the standard library has a package of that name, so imports of it would be ambiguous")
	}
	return nil
}

// goReserved are names the go command does not take as a module's package:
// package patterns, and main, which cannot be imported by its test.
var goReserved = []string{"all", "cmd", "local", "main", "std", "tool", "work"}

// stdRoots are the first path elements of the standard library's packages
// (go list std, Go 1.26) and of GOROOT/src's other directories.
var stdRoots = strings.Fields(`archive arena bufio builtin bytes cmd cmp compress container context
	crypto database debug embed encoding errors expvar flag fmt go hash html image index internal io
	iter log maps math mime net os path plugin reflect regexp runtime simd slices sort strconv strings
	structs sync syscall testdata testing text time unicode unique unsafe vendor weak C`)

// stdPackage reports whether a module named name would collide with the
// standard library: a known root, or a directory of the local GOROOT/src
// (which may be newer than this list).
func stdPackage(name string) bool {
	if slices.Contains(stdRoots, name) {
		return true
	}
	if root := build.Default.GOROOT; root != "" {
		if fi, err := os.Stat(filepath.Join(root, "src", name)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// windowsReserved reports whether name, up to its first dot, is a device
// name Windows reserves (module.CheckPathElement refuses those too).
func windowsReserved(name string) bool {
	short, _, _ := strings.Cut(name, ".")
	switch strings.ToUpper(short) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	u := strings.ToUpper(short)
	return len(u) == 4 && (strings.HasPrefix(u, "COM") || strings.HasPrefix(u, "LPT")) && u[3] >= '0' && u[3] <= '9'
}

// cmdhostSource checks that dir holds the cmdhost module's source tree and
// returns its absolute path.
func cmdhostSource(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--cmdhost-src %s: %w", dir, err)
	}
	data, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("--cmdhost-src %s: not a cmdhost source tree: %w", dir, err)
	}
	if mod := modulePath(data); mod != sdkModule {
		return "", fmt.Errorf("--cmdhost-src %s: not a cmdhost source tree: its go.mod is module %q, not %s", dir, mod, sdkModule)
	}
	return abs, nil
}

// modulePath returns the module path a go.mod declares.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			if p, err := strconv.Unquote(f[1]); err == nil {
				return p
			}
			return f[1]
		}
	}
	return ""
}

// sdkVersion is the version of the cmdhost module to require: this
// binary's own when it was built from a released module, else a
// placeholder.
func sdkVersion() string {
	info, ok := debug.ReadBuildInfo()
	if ok && info.Main.Path == sdkModule && releaseVersion.MatchString(info.Main.Version) {
		return info.Main.Version
	}
	return placeholderVersion
}

// releaseVersion matches the versions a go.mod may require (no "(devel)",
// no "+dirty").
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// checkTarget refuses a target that exists, unless it is an empty
// directory.
func checkTarget(target string) error {
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		d, err := os.Open(target)
		if err != nil {
			return err
		}
		defer d.Close()
		if _, err := d.Readdirnames(1); err == io.EOF {
			return nil
		}
	}
	return fmt.Errorf("%s already exists and is not an empty directory: choose another name, "+
		"or another parent directory with --dir DIR", target)
}

type projectFile struct {
	name string
	data []byte
}

// renderProject executes the templates, one file each.
func renderProject(p project) ([]projectFile, error) {
	funcs := template.FuncMap{"modpath": goModPath}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(projectTemplates, "template/*.tmpl")
	if err != nil {
		return nil, err
	}
	var files []projectFile
	for _, t := range tmpl.Templates() {
		name, ok := strings.CutSuffix(t.Name(), ".tmpl")
		if !ok {
			continue
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, p); err != nil {
			return nil, fmt.Errorf("template %s: %w", t.Name(), err)
		}
		data := buf.Bytes()
		if strings.HasSuffix(name, ".go") {
			if data, err = format.Source(data); err != nil {
				return nil, fmt.Errorf("template %s: %w", t.Name(), err)
			}
		}
		files = append(files, projectFile{name, data})
	}
	order := map[string]int{"go.mod": 1, "main.go": 2, "main_test.go": 3, "Makefile": 4, "README.md": 5}
	slices.SortFunc(files, func(a, b projectFile) int {
		return cmp.Or(cmp.Compare(order[a.name], order[b.name]), strings.Compare(a.name, b.name))
	})
	return files, nil
}

// goModPath writes a path for go.mod, quoted when it has to be.
func goModPath(p string) string {
	if strings.ContainsAny(p, " \t\"'`") || strings.Contains(p, "//") {
		return strconv.Quote(p)
	}
	return p
}

// writeProject writes the files into a temporary directory next to target
// and renames it into place, so a failure leaves no half-made project.
func writeProject(parent, target string, files []projectFile) (err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".new-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) { // an empty directory
		return err
	}
	return os.Rename(tmp, target)
}
