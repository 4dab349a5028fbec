package devcmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
)

// manifestName is the project manifest's file name, in the project's
// folder.
const manifestName = "cmdhost.json"

// maxManifest bounds the manifest read: a few lines in practice.
const maxManifest = 64 << 10

// manifest is what cmdhost.json says of a project.
type manifest struct {
	// Name is the module's name, NAME.wasm when installed (default: the
	// project folder's name).
	Name string `json:"name,omitempty"`
	// Lang is the project's language: go, rust, c or as.
	Lang string `json:"lang"`
	// Build is the command that builds the module, run by sh in the
	// project's folder (default: make).
	Build string `json:"build,omitempty"`
	// Wasm is the module the build writes, relative to the project
	// (default: NAME.wasm).
	Wasm string `json:"wasm,omitempty"`
}

// defaultBuild is the build command of a manifest that names none.
const defaultBuild = "make"

// newManifest is the manifest cmdhost new writes for p: its name and
// language, the rest the defaults.
func newManifest(p project) projectFile {
	data, _ := json.MarshalIndent(manifest{Name: p.Name, Lang: p.Lang}, "", "  ") // cannot fail: strings only
	return projectFile{manifestName, append(data, '\n')}
}

// readManifest reads dir's manifest and fills in its defaults. Its errors
// name the fix.
func readManifest(dir string) (manifest, error) {
	file := filepath.Join(dir, manifestName)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return manifest{}, fmt.Errorf("%s has no %s: cmdhost new NAME writes one in the project it makes; "+
			"for a project of your own, write {\"lang\": \"go\"} (or rust, c, as) into %s, and \"build\" "+
			"when its build command is not make", dir, manifestName, file)
	}
	if err != nil {
		return manifest{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return manifest{}, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxManifest {
		return manifest{}, fmt.Errorf("%s: larger than %d KiB: a manifest is a few lines", file, maxManifest>>10)
	}
	var m manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return manifest{}, fmt.Errorf("%s: %s; want e.g. {\"lang\": \"go\"} with optional \"name\", \"build\" and \"wasm\"", file, jsonError(data, err))
	}
	if dec.More() {
		return manifest{}, fmt.Errorf("%s: more than one JSON object; want one, e.g. {\"lang\": \"go\"}", file)
	}
	switch {
	case m.Lang == "":
		return manifest{}, fmt.Errorf("%s: no \"lang\": add \"lang\": one of %s", file, strings.Join(newLanguages, ", "))
	case !slices.Contains(newLanguages, m.Lang):
		return manifest{}, fmt.Errorf("%s: \"lang\": %q is not a language cmdhost builds: use one of %s (as: AssemblyScript)",
			file, m.Lang, strings.Join(newLanguages, ", "))
	}
	m.Name = cmp.Or(m.Name, filepath.Base(dir))
	if err := checkProjectName(m.Name, "wasm"); err != nil { // a command name and a file name
		return manifest{}, fmt.Errorf("%s: \"name\": %w", file, err)
	}
	m.Build = cmp.Or(strings.TrimSpace(m.Build), defaultBuild)
	m.Wasm = cmp.Or(m.Wasm, m.Name+".wasm")
	if filepath.IsAbs(m.Wasm) || !filepath.IsLocal(m.Wasm) {
		return manifest{}, fmt.Errorf("%s: \"wasm\": %q is outside the project: name the module by its path in the project's folder", file, m.Wasm)
	}
	return m, nil
}

// jsonError is err, a decoding error of data, with its line and column
// when it has an offset.
func jsonError(data []byte, err error) string {
	var offset int64 = -1
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 || offset > int64(len(data)) {
		return err.Error()
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	// The offset is just past the byte that failed (or the value that
	// did not fit): the column is of that byte.
	col := max(int(offset)-bytes.LastIndexByte(before, '\n')-1, 1)
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// tool is a program a language's build needs, and what provides it.
type tool struct{ name, install string }

// toolchains are the programs each language's default build runs (make,
// then the language's compiler) and the packages that provide them.
var toolchains = map[string][]tool{
	"go": {{"go", "Go 1.24 or later (https://go.dev/dl; Debian: golang-go)"}},
	"rust": {{"rustc", "Rust with a WASI target: Debian's rustc libstd-rust-dev-wasm32 (and cargo), " +
		"or rustup with rustup target add wasm32-wasip1"}},
	"c": {{"clang", "clang with wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)"},
		{"wasm-ld", "lld, the WebAssembly linker (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)"}},
	"as": {{"npm", "Node.js and npm (Debian: nodejs npm); the build installs the AssemblyScript compiler, " +
		"npm's assemblyscript, at the version package.json pins"}},
}

// missingTool checks that what m's build runs is on PATH: make for the
// default build, and the language's toolchain. It returns what to install,
// or "".
func missingTool(m manifest, env []string) string {
	var need []tool
	if m.Build == defaultBuild {
		need = append(need, tool{"make", "make (Debian: make)"})
	}
	need = append(need, toolchains[m.Lang]...)
	for _, t := range need {
		where := "is not on PATH"
		if m.Lang == "rust" && t.name == "rustc" {
			if rustc := envValue(env, "RUSTC"); rustc != "" {
				t.name, where = rustc, "(RUSTC) is not found"
			}
		}
		if _, err := exec.LookPath(t.name); err != nil {
			return fmt.Sprintf("%s %s: install %s", t.name, where, t.install)
		}
	}
	return ""
}

// envValue is the value of key in env (KEY=VALUE lines), the last one
// winning as in exec.Cmd.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// rustBuildEnv is the environment a Rust project's build adds to the
// caller's: where the toolchain is chosen (today the caller's RUSTC and
// CARGO, else PATH's rustc and cargo, as the Makefile's defaults). A
// choice of the rustc that has the wasm target belongs here: it would
// return RUSTC=… and CARGO=… for the Makefile.
func rustBuildEnv(env []string) []string { return nil }

// buildHints are what a failed build's output says, for a language, and
// the fix to print with it.
var buildHints = []struct{ lang, output, hint string }{
	{"rust", "E0463", "this rustc has no standard library for the WASI target: install Debian's libstd-rust-dev-wasm32 " +
		"(with /usr/bin/rustc: RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo cmdhost build), or rustup target add wasm32-wasip1"},
	{"c", "'stdlib.h' file not found", "clang finds no WASI C library: install wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)"},
	{"c", "'string.h' file not found", "clang finds no WASI C library: install wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)"},
	{"c", "libclang_rt.builtins", "clang has no WebAssembly runtime library: install libclang-rt-14-dev-wasm32 (or the one of your clang's version)"},
	{"c", "wasm-ld", "install lld, the WebAssembly linker (Debian: lld)"},
}

// buildFailure is a build command that failed, with a hint to the fix
// when its output has one.
type buildFailure struct {
	command, dir string
	err          error
	hint         string
}

func (e *buildFailure) Error() string {
	msg := fmt.Sprintf("%s in %s failed: %v", e.command, e.dir, e.err)
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

// buildProject builds the project in dir as its manifest m says: the
// build command with sh in dir, its output to out. It returns the module
// built: an error when the build failed (a *buildFailure) or wrote no
// module. ctx's end stops the build.
func buildProject(ctx context.Context, dir string, m manifest, out io.Writer) (string, error) {
	env := os.Environ()
	if m.Lang == "rust" {
		env = append(env, rustBuildEnv(env)...)
	}
	if missing := missingTool(m, env); missing != "" {
		return "", fmt.Errorf("building %s (%s): %s", m.Name, m.Lang, missing)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", m.Build)
	cmd.Dir, cmd.Env = dir, env
	// The output goes to out and, the last 64 KiB of it, to tail: a
	// failure's hint is looked for there.
	tail := &lastBytes{max: 64 << 10}
	cmd.Stdout = io.MultiWriter(out, tail)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		f := &buildFailure{command: m.Build, dir: dir, err: err}
		for _, h := range buildHints {
			if h.lang == m.Lang && bytes.Contains(tail.buf, []byte(h.output)) {
				f.hint = h.hint
				break
			}
		}
		return "", f
	}
	wasm := filepath.Join(dir, m.Wasm)
	if st, err := os.Stat(wasm); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s in %s succeeded but made no %s: set \"wasm\" in %s to the module it writes, "+
			"or make it write %s", m.Build, dir, m.Wasm, manifestName, m.Wasm)
	}
	return wasm, nil
}

// lastBytes keeps the last max bytes written to it.
type lastBytes struct {
	buf []byte
	max int
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.max; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

func BuildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "build a handler project's module as its manifest, cmdhost.json, says",
		ArgsUsage: "[DIR]",
		Description: "Reads DIR/cmdhost.json (default: the current folder), which cmdhost new writes:\n" +
			"  {\"name\": \"greet\", \"lang\": \"rust\"}\n" +
			"\"lang\" (go, rust, c or as) is required; \"name\" defaults to the folder's name,\n" +
			"\"build\", the command sh runs in DIR, to make, and \"wasm\", the module it\n" +
			"writes, to NAME.wasm. Checks that the language's toolchain is on PATH (and says\n" +
			"which package provides it), runs the build with its output shown, and checks\n" +
			"that it wrote the module. cmdhost dev builds the same way.",
		Action: runBuild,
	}
}

func runBuild(c *cli.Context) error {
	if c.NArg() > 1 {
		return cli.Exit("build takes at most one project folder: cmdhost build [DIR]", base.ExitUsage)
	}
	dir, err := filepath.Abs(cmp.Or(c.Args().First(), "."))
	if err != nil {
		return err
	}
	m, err := readManifest(dir)
	if err != nil {
		return cli.Exit(err, base.ExitUsage)
	}
	fmt.Fprintf(c.App.ErrWriter, "building %s (%s): %s in %s\n", m.Name, m.Lang, m.Build, dir)
	start := time.Now()
	wasm, err := buildProject(c.Context, dir, m, c.App.ErrWriter)
	if err != nil {
		return cli.Exit(err, base.ExitFailed)
	}
	fmt.Fprintf(c.App.Writer, "built %s in %v\n", wasm, time.Since(start).Round(time.Millisecond))
	return nil
}

// devManifest is how cmdhost dev builds the project in dir: its manifest,
// or without one and with a Makefile, make and NAME.wasm (name, else the
// folder's). A name given (dev --name) is the module's, over the
// manifest's.
func devManifest(dir, name string) (manifest, error) {
	_, errManifest := os.Stat(filepath.Join(dir, manifestName))
	_, errMake := os.Stat(filepath.Join(dir, "Makefile"))
	if errors.Is(errManifest, fs.ErrNotExist) && errMake == nil {
		m := manifest{Name: cmp.Or(name, filepath.Base(dir)), Build: defaultBuild}
		m.Wasm = m.Name + ".wasm"
		return m, nil
	}
	m, err := readManifest(dir)
	if errors.Is(errManifest, fs.ErrNotExist) {
		return manifest{}, fmt.Errorf("%w; or give it a Makefile whose default target builds NAME.wasm", err)
	}
	if err != nil {
		return manifest{}, err
	}
	if name != "" && name != m.Name {
		if m.Wasm == m.Name+".wasm" {
			m.Wasm = name + ".wasm"
		}
		m.Name = name
	}
	return m, nil
}
