package devcmd

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/sdk"
)

// The modules of cmdhost: a Go handler project requires the SDK and the ABI
// (its test imports both), two small modules with no dependencies, and
// none of the host's.
const (
	hostModule = "github.com/cmdhost/cmdhost"
	sdkModule  = hostModule + "/sdk"
	abiModule  = hostModule + "/abi"
)

// placeholderVersion is the version a handler project requires when this
// binary has no released one: the modules are not published, so the
// replace lines decide which code is used, not the version.
const placeholderVersion = "v0.0.0-00010101000000-000000000000"

// carriedSDK is where a Go project carries the SDK's modules, relative to
// the project.
const carriedSDK = "cmdhost"

//go:embed all:template
var projectTemplates embed.FS

// newLanguages are the languages of cmdhost new, each a folder of
// templates (template/LANG) and an SDK the project carries (sdkFiles).
var newLanguages = []string{"go", "rust", "c", "as"}

func NewCommand() *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "make a handler project in Go, Rust, C or AssemblyScript that builds into a plugin",
		ArgsUsage: "NAME",
		Description: "Writes DIR/NAME/: the commands NAME (an echo), NAME-count (a count kept in the\n" +
			"state store), NAME-event (publishes an event) and NAME-fetch (calls an HTTP API),\n" +
			"their test, a Makefile (make → NAME.wasm, make test, make install PLUGINS=DIR),\n" +
			"the manifest cmdhost.json (what cmdhost build and cmdhost dev read to build it),\n" +
			"a README on building, installing and calling it and on the operator file that\n" +
			"grants its topics and hosts, and the SDK of its language in ./cmdhost, from this\n" +
			"binary: cmdhost's modules are not published, and the project builds with nothing\n" +
			"else from cmdhost.\n" +
			"NAME must be a command name of at most 122 bytes (and, in Go, a module path element).\n\n" +
			"--lang go (default), rust (cargo, or rustc alone; wasm32-wasip1, or wasm32-wasi\n" +
			"before Rust 1.78), c (clang and wasi-libc)\n" +
			"or as (AssemblyScript, whose compiler make installs from npm). In Go,\n" +
			"--cmdhost-src DIR builds against a cmdhost source tree instead of the copy.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lang", Value: "go", Usage: "the handler's language: go, rust, c or as"},
			&cli.StringFlag{Name: "dir", Value: ".", Usage: "make the project in `DIR`/NAME"},
			&cli.StringFlag{Name: "cmdhost-src", Usage: "Go: build against the cmdhost source tree `DIR` (replace lines to its abi and sdk) instead of carrying the SDK", EnvVars: []string{"CMDHOST_SRC"}},
		},
		Action: runNew,
	}
}

// project is what the templates are executed with.
type project struct {
	Name       string
	Count      string // the second command, NAME-count, which shows the state store
	Event      string // NAME-event, which shows publishing
	Fetch      string // NAME-fetch, which shows outbound HTTP
	Lang       string
	GoVersion  string
	SDKModule  string
	SDKVersion string
	SDKDir     string // Go: the directory the SDK module is replaced with
	ABIModule  string
	ABIVersion string
	ABIDir     string // Go: the directory the ABI module is replaced with
	Replace    string // Go: absolute path of a cmdhost source tree, or "" to carry the SDK
	Crate      string // Rust: the crate name
	NPMName    string // AssemblyScript: the package name
	ASCVersion string // AssemblyScript: the compiler's version
	Cmdhost    string // the Makefile's CMDHOST: the cmdhost that made the project, for make
}

// newProject is the project name in lang, carrying its SDK. A Go project
// declares the Go version the SDK's module does: a module may not declare
// less than its dependencies.
func newProject(name, lang string) (project, error) {
	gomod, err := fs.ReadFile(sdk.Source(), "go.mod")
	if err != nil {
		return project{}, fmt.Errorf("the SDK's go.mod: %w", err)
	}
	return project{
		Name: name, Count: name + countSuffix, Event: name + eventSuffix, Fetch: name + fetchSuffix, Lang: lang, GoVersion: goModLine(gomod, "go"),
		SDKModule: sdkModule, SDKVersion: moduleVersion(sdkModule), SDKDir: "./" + carriedSDK + "/sdk",
		ABIModule: abiModule, ABIVersion: moduleVersion(abiModule), ABIDir: "./" + carriedSDK + "/abi",
		Crate: crateName(name), NPMName: npmName(name),
	}, nil
}

// buildAgainst makes a Go project use the SDK and ABI modules of the
// cmdhost source tree src (an absolute path) instead of carrying them.
func (p *project) buildAgainst(src string) {
	p.Replace = src
	p.SDKDir, p.ABIDir = filepath.Join(src, "sdk"), filepath.Join(src, "abi")
}

func runNew(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("new needs one name: cmdhost new NAME [--lang go|rust|c|as] [--dir DIR]", base.ExitUsage)
	}
	p, err := newProject(c.Args().First(), c.String("lang"))
	if err != nil {
		return err
	}
	if !slices.Contains(newLanguages, p.Lang) {
		return cli.Exit(fmt.Sprintf("--lang %s: want one of %s", p.Lang, strings.Join(newLanguages, ", ")), base.ExitUsage)
	}
	if err := checkProjectName(p.Name, p.Lang); err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	if src := c.String("cmdhost-src"); src != "" && p.Lang == "go" {
		abs, err := cmdhostSource(src)
		if err != nil {
			return cli.Exit(err, base.ExitUsage)
		}
		p.buildAgainst(abs)
	}
	if p.Lang == "as" {
		if p.ASCVersion, err = ascVersion(); err != nil {
			return err
		}
	}
	self := selfCommand()
	p.Cmdhost = makeWord(self.path)
	target := filepath.Join(c.String("dir"), p.Name)
	if err := checkTarget(target); err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	files, err := renderProject(p)
	if err != nil {
		return err
	}
	sdkCopy, err := sdkFiles(p)
	if err != nil {
		return err
	}
	files = append(files, newManifest(p))
	if err := writeProject(c.String("dir"), target, append(files, sdkCopy...)); err != nil {
		return err
	}

	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	if len(sdkCopy) > 0 {
		names = append(names, "cmdhost/ (the SDK)")
	}
	// The hints lead with cmdhost build, which reads the manifest and says
	// what is missing of the toolchain, rather than make, which it runs.
	fmt.Fprintf(c.App.Writer, "created %s (%s): %s\n\nnext:\n  cd %s\n  %s build   # builds %s.wasm as cmdhost.json says (make)\n  make test\n"+
		"  %s plugin install %s.wasm --plugins DIR   # a running host's folder\n  %s invoke %s -d hi\n"+
		"  %s dev --plugins DIR   # or: build and install again at every change\n",
		target+string(filepath.Separator), p.Lang, strings.Join(names, " "), shellWord(target), self.hint, p.Name, self.hint, p.Name, self.hint, p.Name, self.hint)
	return nil
}

// self is the cmdhost that runs: path is its absolute path, for the
// project's Makefile; hint is how a shell in any directory runs it, for
// the hints: "cmdhost" when PATH finds this very file.
type self struct{ path, hint string }

// selfCommand finds this binary, so that a project calls the cmdhost that
// made it rather than whatever PATH holds (often nothing: the README builds
// bin/cmdhost). When PATH's cmdhost is this file, the Makefile names it by
// that path (a link an upgrade moves along) and the hints say "cmdhost".
// Without a path of its own (os.Executable fails) it is "cmdhost".
func selfCommand() self {
	exe, err := os.Executable()
	if err != nil || strings.ContainsAny(exe, "\n\r") { // no line of a Makefile holds a newline
		return self{"cmdhost", "cmdhost"}
	}
	if onPath, err := exec.LookPath("cmdhost"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil && sameFile(abs, exe) {
			return self{abs, "cmdhost"}
		}
	}
	return self{exe, shellWord(exe)}
}

// sameFile reports whether the paths a and b name the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// plainWord is what a shell word needs no quotes for.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellWord is s as one word of a POSIX shell command line: as is when it
// can be, else in single quotes.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// makeWord is s as the value of a make variable that recipes use as one
// shell word: shellWord, with make's own '$' and '#' escaped.
func makeWord(s string) string {
	return strings.NewReplacer("$", "$$", "#", `\#`).Replace(shellWord(s))
}

// crateName is a Rust crate name for name: what a crate name may not
// hold becomes '_'.
func crateName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}

// npmName is an npm package name for name: lower case, '-' for what a
// package name may not hold.
func npmName(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
	return strings.TrimLeft(s, "._")
}

// ascVersion is the AssemblyScript compiler version the SDK pins.
func ascVersion() (string, error) {
	data, err := fs.ReadFile(sdk.Source(), "assemblyscript/package.json")
	if err != nil {
		return "", err
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.DevDependencies["assemblyscript"] == "" {
		return "", fmt.Errorf("the AssemblyScript SDK's package.json pins no assemblyscript version: %v", err)
	}
	return pkg.DevDependencies["assemblyscript"], nil
}

// sdkFiles is the SDK a project of p's language carries in ./cmdhost:
// in Go the modules abi and sdk, each with its go.mod (none when it builds
// against a source tree); otherwise the SDK of the language. They come
// from this binary (abi.Source, sdk.Source).
func sdkFiles(p project) ([]projectFile, error) {
	type from struct {
		fsys     fs.FS
		dir, to  string
		suffixes []string
	}
	var copies []from
	var files []projectFile
	switch p.Lang {
	case "go":
		if p.Replace != "" {
			return nil, nil
		}
		copies = []from{{abi.Source(), ".", carriedSDK + "/abi", []string{".go", ".md", "go.mod"}}, {sdk.Source(), ".", carriedSDK + "/sdk", []string{".go", "go.mod"}}}
	case "rust":
		copies = []from{{sdk.Source(), "rust", "cmdhost", []string{"Cargo.toml"}}, {sdk.Source(), "rust/src", "cmdhost/src", []string{".rs"}}}
	case "c":
		copies = []from{{sdk.Source(), "c", "cmdhost", []string{".c", ".h"}}}
	case "as":
		copies = []from{{sdk.Source(), "assemblyscript/assembly", "cmdhost", []string{".ts"}}}
	}
	for _, c := range copies {
		entries, err := fs.ReadDir(c.fsys, c.dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, "_test.go") || n == "source.go" || !slices.ContainsFunc(c.suffixes, func(s string) bool { return strings.HasSuffix(n, s) }) {
				continue
			}
			data, err := fs.ReadFile(c.fsys, path.Join(c.dir, n))
			if err != nil {
				return nil, err
			}
			if n == "go.mod" {
				data = append([]byte("// This module as cmdhost new copied it from its binary.\n"), data...)
			}
			files = append(files, projectFile{path.Join(c.to, n), data})
		}
	}
	return files, nil
}

// modulePathElement is what a Go module path element may hold, without
// '~' (the shell expands it): ASCII letters, digits, '-', '_' and '.'.
var modulePathElement = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// The suffixes of the names of a project's other commands: NAME-count,
// which shows the state store, NAME-event, publishing, and NAME-fetch,
// outbound HTTP. They are as long as one another: the bound on NAME is
// the same for each.
const (
	countSuffix = "-count"
	eventSuffix = "-event"
	fetchSuffix = "-fetch"
)

// checkProjectName checks that name can be a command name (and so can
// name with each suffix: NAME-count, NAME-event, NAME-fetch) and a file
// name, and in Go a module path (a single element), so that the
// toolchain and the host accept it.
func checkProjectName(name, lang string) error {
	if err := abi.ValidateCommandName(name); err != nil {
		msg := strings.TrimPrefix(err.Error(), abi.ErrMalformed.Error()+": ")
		return fmt.Errorf("%q is not a valid command name: %s", name, msg)
	}
	if len(name+countSuffix) > abi.MaxCommandName {
		return fmt.Errorf("%q is too long: the project's second command, NAME%s, would pass the bound of %d bytes of a command name; use at most %d",
			name, countSuffix, abi.MaxCommandName, abi.MaxCommandName-len(countSuffix))
	}
	if lang != "go" {
		if !modulePathElement.MatchString(name) || name[0] == '.' || name[0] == '-' {
			return fmt.Errorf("%q cannot name the project's files: use ASCII letters, digits, '-', '_' and '.', and start with a letter or digit", name)
		}
		return nil
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

// cmdhostSource checks that dir holds a cmdhost source tree whose abi and
// sdk are modules of their own, and returns its absolute path.
func cmdhostSource(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--cmdhost-src %s: %w", dir, err)
	}
	for _, m := range []struct{ gomod, module string }{{"go.mod", hostModule}, {"abi/go.mod", abiModule}, {"sdk/go.mod", sdkModule}} {
		data, err := os.ReadFile(filepath.Join(abs, filepath.FromSlash(m.gomod)))
		switch {
		case errors.Is(err, fs.ErrNotExist) && m.module != hostModule:
			return "", fmt.Errorf("--cmdhost-src %s: it has no %s: a cmdhost source tree from before abi and sdk "+
				"became modules of their own; use one as new as this binary", dir, m.gomod)
		case err != nil:
			return "", fmt.Errorf("--cmdhost-src %s: not a cmdhost source tree: %w", dir, err)
		}
		if mod := goModLine(data, "module"); mod != m.module {
			return "", fmt.Errorf("--cmdhost-src %s: not a cmdhost source tree: its %s is module %q, not %s", dir, m.gomod, mod, m.module)
		}
	}
	return abs, nil
}

// goModLine returns the argument of the first line of a go.mod that starts
// with verb: the module path of "module", the version of "go".
func goModLine(gomod []byte, verb string) string {
	for line := range strings.Lines(string(gomod)) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == verb {
			if p, err := strconv.Unquote(f[1]); err == nil {
				return p
			}
			return f[1]
		}
	}
	return ""
}

// moduleVersion is the version of the module path (sdk or abi) to
// require: the one this binary was built with when that was a released
// version, not a replace; else a placeholder.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path && m.Replace == nil && releaseVersion.MatchString(m.Version) {
				return m.Version
			}
		}
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

// renderProject executes the templates of p's language, one file each,
// named by the template's path under template/LANG.
func renderProject(p project) ([]projectFile, error) {
	root := "template/" + p.Lang
	var files []projectFile
	err := fs.WalkDir(projectTemplates, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".tmpl") {
			return err
		}
		text, err := fs.ReadFile(projectTemplates, name)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(name, root+"/"), ".tmpl")
		t, err := template.New(rel).Funcs(template.FuncMap{"modpath": goModPath}).Parse(string(text))
		if err == nil { // the sections every language's README shares
			_, err = t.ParseFS(projectTemplates, "template/shared/*.tmpl")
		}
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, p); err != nil {
			return fmt.Errorf("template %s: %w", name, err)
		}
		data := buf.Bytes()
		if strings.HasSuffix(rel, ".go") {
			if data, err = format.Source(data); err != nil {
				return fmt.Errorf("template %s: %w", name, err)
			}
		}
		files = append(files, projectFile{rel, data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	first := []string{"go.mod", "package.json", "Makefile"} // then by name
	rank := func(name string) int {
		if i := slices.Index(first, name); i >= 0 {
			return i
		}
		return len(first)
	}
	slices.SortFunc(files, func(a, b projectFile) int {
		return cmp.Or(cmp.Compare(rank(a.name), rank(b.name)), strings.Compare(a.name, b.name))
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
		dst := filepath.Join(tmp, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, f.data, 0o644); err != nil {
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
