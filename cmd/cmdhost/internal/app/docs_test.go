package app

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// The documentation's commands are checked here (`make docs-check` runs
// this file's tests alone): every shell command shown in README.md or
// docs/*.md is run against a real host, or, for make targets, dry-run;
// every flag a synopsis in docs/cli.md shows exists. A command the docs
// gain that no rule below knows fails TestDocsCommands, naming it.

// docCommand is one shell command shown in a markdown file: the command
// (continuation lines joined) and what its trailing "# …" comment says.
type docCommand struct {
	where         string // file:line
	text, comment string
}

// docFiles are the files whose commands are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(clitest.RepoRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(clitest.RepoRoot(t), "README.md")}, files...)
}

// shellStart says a code line is a shell command: what the docs run.
var shellStart = regexp.MustCompile(`^(make|bin/cmdhost|cmdhost|mosquitto_rr|mosquitto_sub|mosquitto_pub|GOOS=\S+|go|curl)( |$)`)

// docCommands returns the shell commands of the code in file: indented
// blocks and fenced blocks other than ```go.
func docCommands(t *testing.T, file string) []docCommand {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	sc := bufio.NewScanner(f)
	fence, goFence, n := false, false, 0
	var pending *docCommand
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence, goFence = !fence, !fence && strings.HasPrefix(line, "```go")
			continue
		}
		var code string
		switch {
		case fence && !goFence:
			code = line
		case !fence && strings.HasPrefix(line, "    "):
			code = strings.TrimSpace(line)
		default:
			continue
		}
		if pending != nil { // a continuation
			pending.text += " " + strings.TrimSpace(strings.TrimSuffix(code, "\\"))
			if !strings.HasSuffix(code, "\\") {
				out, pending = append(out, *pending), nil
			}
			continue
		}
		code = strings.TrimPrefix(code, "$ ")
		if !shellStart.MatchString(code) {
			continue
		}
		c := docCommand{where: filepath.Base(file) + ":" + strconv.Itoa(n)}
		if i := strings.Index(code, "  #"); i >= 0 {
			c.comment = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(code[i:]), "#"))
			code = strings.TrimSpace(code[:i])
		}
		c.text = strings.TrimSpace(strings.TrimSuffix(code, "\\"))
		if strings.HasSuffix(code, "\\") {
			pending = &c
			continue
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocsCommands runs every shell command of the docs. The host the
// quickstart's commands talk to is `make run`'s command line (read with
// `make -n run`, which publishes the events of the events example) on a
// free port.
func TestDocsCommands(t *testing.T) {
	testkit.Needs(t, testkit.Plugins)
	var cmds []docCommand
	for _, f := range docFiles(t) {
		cmds = append(cmds, docCommands(t, f)...)
	}
	if len(cmds) < 5 {
		t.Fatalf("found %d commands in the docs: the parser is broken", len(cmds))
	}

	runLine := makeDryRun(t, "run")
	serveLine := runLine[strings.LastIndex(runLine, "bin/cmdhost serve"):]
	fields := strings.Fields(serveLine)
	if len(fields) != 5 || fields[2] != "--plugins" || fields[4] != "--events" {
		t.Fatalf("make run's last command is %q; this test starts `bin/cmdhost serve --plugins DIR --events`", serveLine)
	}
	addr, _ := clitest.StartServeIn(t, filepath.Join(clitest.RepoRoot(t), fields[3]), nil, fields[4])
	broker := "mqtt://" + addr
	host := &docHost{broker: broker, port: addr[strings.LastIndex(addr, ":")+1:], executor: "cli-host"}
	stateWalk := newStateDoc(t)

	for _, c := range cmds {
		t.Run(c.where, func(t *testing.T) {
			t.Logf("%s  # %s", c.text, c.comment)
			words := strings.Fields(c.text)
			switch {
			case words[0] == "make" && len(words) == 2:
				makeDryRun(t, words[1])
			case c.text == "cmdhost [--cache-dir DIR] COMMAND": // the CLI's synopsis
				checkFlags(t, nil, []string{"--cache-dir"})
			case words[0] == "bin/cmdhost" && len(words) > 1 && words[1] == "invoke":
				host.invoke(t, c)
			case words[0] == "mosquitto_rr":
				host.mosquittoRR(t, c)
			case len(words) > 1 && words[0] == "cmdhost" && words[1] == "publish":
				host.publish(t, c)
			case words[0] == "mosquitto_sub" && strings.Contains(c.text, "cmdhost/+/events"):
				host.events(t, c)
			case len(words) > 2 && words[0] == "cmdhost" && words[1] == "serve" && strings.Contains(c.text, " --store rediss://"):
				serveWithStoreSecrets(t, c)
			case strings.HasPrefix(c.where, fleetDoc+":") && words[0] == "cmdhost":
				fleetDocFlags(t, c) // and TestDocsFleet runs it
			case strings.HasPrefix(c.where, "state.md:") && words[0] == "cmdhost":
				stateWalk.run(t, c)
			case strings.HasPrefix(c.where, "security.md:") && words[0] == "cmdhost":
				securityRecipeCommand(t, c)
			case strings.HasPrefix(c.text, "GOOS=wasip1 GOARCH=wasm go build") && strings.Contains(c.text, "greet.wasm"):
				buildGreet(t, c)
			default:
				t.Errorf("%s: %q is not checked: add a rule to TestDocsCommands (cmd/cmdhost/docs_test.go)", c.where, c.text)
			}
		})
	}
}

// serveWithStoreSecrets checks a `cmdhost serve … --store rediss://…`
// example: every flag it shows is serve's, and run here, where its files
// do not exist, it stops at the start naming the first one missing (exit
// 2), before it connects to anything. (TestStoreRedisTLSSecrets runs such
// a serve against a real Redis.)
func serveWithStoreSecrets(t *testing.T, c docCommand) {
	t.Helper()
	words := strings.Fields(c.text)
	var flags []string
	for _, w := range words {
		if strings.HasPrefix(w, "--") {
			flags = append(flags, w)
		}
	}
	checkFlags(t, []string{"serve"}, flags)
	_, errOut, code := clitest.Run(t, words[1:]...)
	if code != base.ExitUsage || !regexp.MustCompile(`--store-\S+: (stat|secret file)`).MatchString(errOut) {
		t.Errorf("%s: exit %d, %q; want exit %d naming a missing --store-* file", c.where, code, errOut, base.ExitUsage)
	}
}

// securityRecipeCommand checks a `cmdhost …` line of docs/security.md: it
// is one of a recipe's that TestDocsSecurityRecipes (security_recipes_test.go)
// runs against a mosquitto with the recipe's config, and every flag it
// shows is its command's.
func securityRecipeCommand(t *testing.T, c docCommand) {
	t.Helper()
	recipes := append(recipeCommands(t, tlsRecipe), recipeCommands(t, aclRecipe)...)
	recipes = append(recipes, recipeCommands(t, aioRecipe)...)
	recipes = append(recipes, recipeCommands(t, embeddedRecipe)...)
	if !slices.ContainsFunc(recipes, func(r docCommand) bool { return r.text == c.text }) {
		t.Errorf("%s: %q is in no recipe TestDocsSecurityRecipes runs (the ```sh blocks under %q, %q, %q and %q)", c.where, c.text, tlsRecipe, aclRecipe, aioRecipe, embeddedRecipe)
	}
	words := strings.Fields(c.text)
	var flags []string
	for _, w := range words {
		if strings.HasPrefix(w, "--") {
			flags = append(flags, w)
		}
	}
	path := words[1:2]
	if slices.Contains([]string{"plugin", "user"}, words[1]) { // commands of subcommands
		path = words[1:3]
	}
	checkFlags(t, path, flags)
}

// makeDryRun checks that the make target exists (make -n) and returns
// what it would run.
func makeDryRun(t *testing.T, target string) string {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "-n", target)
	cmd.Dir = clitest.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	return strings.TrimSpace(string(out))
}

// docHost is the host the quickstart's commands talk to.
type docHost struct{ broker, port, executor string }

// invoke runs a `bin/cmdhost invoke` line against the host and checks what
// its comment promises: "→ OUT" (stdout, up to a ", then" that tells what
// later calls print) or "TEXT on stderr, exit N".
func (h *docHost) invoke(t *testing.T, c docCommand) {
	cmd := exec.Command(clitest.Binary, append([]string{"--cache-dir", clitest.CLICache()}, strings.Fields(c.text)[1:]...)...)
	cmd.Env = append(os.Environ(), "CMDHOST_BROKER="+h.broker, "CMDHOST_EXECUTOR="+h.executor)
	stdout, stderr, code := runExec(t, cmd)
	switch {
	case strings.HasPrefix(c.comment, "→ "):
		want := strings.TrimPrefix(c.comment, "→ ")
		if i := strings.Index(want, ", then"); i >= 0 {
			want = want[:i]
		}
		// "…" in the docs stands for anything.
		pattern := "^" + strings.ReplaceAll(regexp.QuoteMeta(want), "…", ".*") + "$"
		if code != 0 || !regexp.MustCompile(pattern).MatchString(strings.TrimSpace(stdout)) {
			t.Errorf("%s: stdout %q, stderr %q, exit %d; the docs say %q", c.where, stdout, stderr, code, c.comment)
		}
	case regexp.MustCompile(`^.+ on stderr, exit \d+$`).MatchString(c.comment):
		m := regexp.MustCompile(`^(.+) on stderr, exit (\d+)$`).FindStringSubmatch(c.comment)
		if !strings.Contains(stderr, m[1]) || strconv.Itoa(code) != m[2] {
			t.Errorf("%s: stderr %q, exit %d; the docs say %q", c.where, stderr, code, c.comment)
		}
	default:
		t.Errorf("%s: the comment %q says nothing this test can check: write \"→ OUTPUT\" or \"TEXT on stderr, exit N\"", c.where, c.comment)
	}
}

// publish runs a `cmdhost publish` line against the host's broker: the
// broker acknowledges the message (exit 0).
func (h *docHost) publish(t *testing.T, c docCommand) {
	cmd := exec.Command(clitest.Binary, strings.Fields(c.text)[1:]...)
	cmd.Env = append(os.Environ(), "CMDHOST_BROKER="+h.broker)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v: %s", c.where, err, out)
	}
}

// mosquittoRR runs the README's mosquitto_rr line against the host (its
// port, its executor id for $(hostname)) and expects the echo of its -m;
// then again with another -m, which must come back too: the line makes
// fresh correlation data for each request (the same data would make the
// second a duplicate of the first, answered with the first's reply).
func (h *docHost) mosquittoRR(t *testing.T, c docCommand) {
	line := strings.ReplaceAll(c.text, "$(hostname)", h.executor)
	line = strings.Replace(line, "-p 11883", "-p "+h.port, 1)
	m := regexp.MustCompile(` -m (\S+)`).FindStringSubmatch(line)
	if m == nil || !strings.Contains(line, "-p "+h.port) {
		t.Fatalf("%s: expected -p 11883 and -m MESSAGE in %q", c.where, c.text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	for _, msg := range []string{m[1], m[1] + "-again"} {
		run := strings.Replace(line, m[0], " -m "+msg, 1)
		out, err := exec.CommandContext(ctx, "sh", "-c", run+" -W 60").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != msg {
			t.Errorf("%s: %v, output %q; want %q", c.where, err, out, msg)
		}
	}
}

// events runs the mosquitto_sub line of the timeout events against the
// host (started with --events) and makes a call time out: the event must
// arrive on cmdhost/{executorId}/events.
func (h *docHost) events(t *testing.T, c docCommand) {
	line := strings.Replace(c.text, "-p 11883", "-p "+h.port, 1)
	if line == c.text {
		t.Fatalf("%s: expected -p 11883 in %q", c.where, c.text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	sub := exec.CommandContext(ctx, "sh", "-c", line+" -C 1 -W 60")
	var out bytes.Buffer
	sub.Stdout, sub.Stderr = &out, &out
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	// Nothing tells when mosquitto_sub has subscribed: calls are made to
	// time out, one after another, until it has printed the one event it
	// waits for (-C 1).
	done := make(chan error, 1)
	go func() { done <- sub.Wait() }()
	for {
		_, _, _ = clitest.Run(t, "invoke", "spin", "--timeout", "1s", "--broker", h.broker, "--executor", h.executor)
		select {
		case err := <-done:
			want := "cmdhost/" + h.executor + "/events {"
			if err != nil || !strings.HasPrefix(out.String(), want) {
				t.Errorf("%s: %v, output %q; want a line starting %q", c.where, err, out.String(), want)
			}
			return
		case <-ctx.Done():
			t.Fatalf("%s: no event within a minute: %q", c.where, out.String())
		default:
		}
	}
}

// goBlock returns the first ```go block of the README.
func goBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no ```go block")
	}
	return string(m[1])
}

// buildGreet builds the README's handler with the README's command, in a
// module of its own that uses this tree's SDK modules (sdk, and abi, which
// it requires), and calls it.
func buildGreet(t *testing.T, c docCommand) {
	dir := t.TempDir()
	src := clitest.RepoRoot(t)
	gomod := "module greet\n\ngo 1.26\n\nrequire github.com/cmdhost/cmdhost/sdk v0.0.0\n\n" +
		"replace github.com/cmdhost/cmdhost/sdk => " + filepath.Join(src, "sdk") + "\n\n" +
		"replace github.com/cmdhost/cmdhost/abi => " + filepath.Join(src, "abi") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goBlock(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("sh", "-c", c.text)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", c.where, err, out)
	}
	out, errOut, code := clitest.Run(t, "call", filepath.Join(dir, "greet.wasm"), "greet", "-d", "docs")
	if code != 0 || out != "hello docs" {
		t.Errorf("the README's handler: stdout %q, stderr %q, exit %d; want \"hello docs\"", out, errOut, code)
	}
}

// synopsis is a `cmdhost …` code span that starts a line of docs/cli.md
// (a command's section): the command's words, then its flags.
var synopsis = regexp.MustCompile("^`(cmdhost [^`]*)`")

// TestDocsFlags: every flag a synopsis of docs/cli.md shows is one its
// command has (its --help lists it), and every command shown exists.
func TestDocsFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(clitest.RepoRoot(t), "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := synopsis.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, spanText := range []string{m[1]} {
			rows++
			words := strings.Fields(strings.TrimPrefix(spanText, "cmdhost "))
			var path, flags []string
			for _, w := range words {
				switch {
				case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[-"):
					flags = append(flags, regexp.MustCompile(`-{1,2}[a-z][a-z0-9-]*`).FindString(w))
				case len(flags) == 0 && regexp.MustCompile(`^[a-z]+$`).MatchString(w):
					path = append(path, w)
				}
			}
			checkFlags(t, path, flags)
		}
	}
	if rows < 8 {
		t.Fatalf("found %d synopses in docs/cli.md: the parser is broken", rows)
	}
}

// checkFlags checks that `cmdhost PATH… --help` lists each flag.
func checkFlags(t *testing.T, path, flags []string) {
	t.Helper()
	out, errOut, code := clitest.Run(t, append(append([]string{}, path...), "--help")...)
	if code != 0 {
		t.Errorf("cmdhost %s --help: exit %d: %s", strings.Join(path, " "), code, errOut)
		return
	}
	for _, f := range flags {
		if !regexp.MustCompile(`(^|[ ,])` + regexp.QuoteMeta(f) + `\b`).MatchString(out) {
			t.Errorf("docs/cli.md shows %s for `cmdhost %s`; its --help does not list it", f, strings.Join(path, " "))
		}
	}
}
