// Command testprogress runs `go test -json …` (the command after "--")
// and writes what package testprogress makes of it: make test's test
// runs, which said nothing for minutes at a time.
//
//	go run ./internal/testprogress/cmd/testprogress -- go test -json ./...
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cmdhost/cmdhost/internal/testprogress"
)

func main() {
	every := flag.Duration("every", time.Minute, "how often to say which packages are running")
	prefix := flag.String("trim", "github.com/cmdhost/cmdhost", "package path prefix left out")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testprogress [-every DUR] -- go test -json PACKAGES")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
	p := testprogress.New(os.Stdout, *prefix)
	// The ticker's goroutine and Read share p (its methods lock).
	tick := time.NewTicker(*every)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case now := <-tick.C:
				p.Tick(now)
			case <-done:
				return
			}
		}
	}()
	readErr := p.Read(out)
	close(done)
	tick.Stop()
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		fmt.Fprintln(os.Stderr, "testprogress: reading go test's output:", readErr)
		os.Exit(1)
	case waitErr != nil || p.Failed():
		os.Exit(1)
	}
}
