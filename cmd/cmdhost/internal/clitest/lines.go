package clitest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// outputLines runs a long-lived cmdhost process (watch, dev) and hands
// its stdout over line by line. Its reader goroutine only reads; the
// test's goroutine checks, so no check runs after the test ends.
type outputLines struct {
	Cmd   *exec.Cmd
	lines chan string
	Seen  []string
	guard <-chan time.Time // hang guard: two minutes from the start
}

// StartLines starts cmdhost with args; the process is killed when the
// test ends.
func StartLines(t *testing.T, args ...string) *outputLines {
	t.Helper()
	o := &outputLines{Cmd: exec.Command(Binary, withStateDir(t, args)...), lines: make(chan string, 1000), guard: time.After(2 * time.Minute)}
	stdout, err := o.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Cmd.Process.Kill() })
	go func() {
		defer close(o.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			o.lines <- sc.Text()
		}
	}()
	return o
}

// Until returns the first line ok accepts (what names it), failing the
// test when the process ends first or the hang guard fires.
func (o *outputLines) Until(t *testing.T, what string, ok func(line string) bool) string {
	t.Helper()
	for {
		select {
		case line, open := <-o.lines:
			if !open {
				t.Fatalf("the process ended before %s:\n%s", what, strings.Join(o.Seen, "\n"))
			}
			o.Seen = append(o.Seen, line)
			if ok(line) {
				return line
			}
		case <-o.guard:
			t.Fatalf("no %s within two minutes:\n%s", what, strings.Join(o.Seen, "\n"))
		}
	}
}

// UntilContains returns the first line holding want.
func (o *outputLines) UntilContains(t *testing.T, want string) string {
	t.Helper()
	return o.Until(t, "line with "+want, func(line string) bool { return strings.Contains(line, want) })
}
