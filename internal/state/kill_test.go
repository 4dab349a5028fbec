package state

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperDirEnv names the folder of the writing process TestAcknowledgedWritesSurviveKill runs.
const helperDirEnv = "CMDHOST_STATE_KILL_DIR"

// TestAcknowledgedWritesSurviveKill runs a process that commits as fast
// as it can from 16 goroutines, printing each commit once it returned,
// kills it with SIGKILL mid-stream, and checks that every commit it
// printed is in the store, its outcome with it.
func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	if dir := os.Getenv(helperDirEnv); dir != "" {
		writeUntilKilled(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcknowledgedWritesSurviveKill$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []int
	lines := bufio.NewScanner(out)
	for lines.Scan() && len(acked) < 2000 {
		n, err := strconv.Atoi(lines.Text())
		if err != nil {
			continue // the test binary's own lines
		}
		acked = append(acked, n)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(acked) < 2000 {
		t.Fatalf("the writer stopped after %d commits", len(acked))
	}
	d, err := OpenDisk(DiskConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, n := range acked {
		key := fmt.Sprint(n)
		if it, err := d.Get(ctx, "a", []byte(key)); err != nil || string(it.Value) != key {
			t.Fatalf("acknowledged write %d: %q, %v", n, it.Value, err)
		}
		if v, ok, err := d.Outcome(ctx, OutcomeID{Correlation: key, ResponseTopic: "r"}); err != nil || !ok || string(v) != key {
			t.Fatalf("acknowledged outcome %d: %q %v %v", n, v, ok, err)
		}
	}
	u, _ := d.Usage(ctx, "a")
	if u.Keys < int64(len(acked)) {
		t.Fatalf("usage %+v after %d acknowledged keys", u, len(acked))
	}
	t.Logf("%d acknowledged commits before the kill; %d keys found after (commits in the last batch may be there unacknowledged)", len(acked), u.Keys)
}

// writeUntilKilled is the writing process.
func writeUntilKilled(dir string) {
	d, err := OpenDisk(DiskConfig{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var next int
	for range 16 {
		go func() {
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				key := fmt.Sprint(n)
				_, err := d.Commit(ctx, &Commit{Ops: []Op{set("a", key, key)},
					Outcome: &Outcome{ID: OutcomeID{Correlation: key, ResponseTopic: "r"}, Value: []byte(key), KeepUntil: time.Now().Add(time.Hour)}})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintln(w, n)
				_ = w.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}
