package testprogress

import (
	"strings"
	"testing"
	"time"
)

// A package's passing tests cost one line at its end, a failing test
// shows its output, a package without tests none; while packages run, a
// tick names each with its outermost running test.
func TestProgress(t *testing.T) {
	var out strings.Builder
	p := New(&out, "example.com/m")
	t0 := time.Unix(1e9, 0).UTC()
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano) }
	events := strings.Join([]string{
		`{"Time":"` + at(0) + `","Action":"start","Package":"example.com/m/a"}`,
		`{"Time":"` + at(0) + `","Action":"run","Package":"example.com/m/a","Test":"TestSlow"}`,
		`{"Time":"` + at(1) + `","Action":"run","Package":"example.com/m/a","Test":"TestSlow/sub"}`,
		`{"Time":"` + at(1) + `","Action":"output","Package":"example.com/m/a","Test":"TestSlow/sub","Output":"=== RUN   TestSlow/sub\n"}`,
		`{"Time":"` + at(0) + `","Action":"start","Package":"example.com/m/b"}`,
		`{"Time":"` + at(0) + `","Action":"run","Package":"example.com/m/b","Test":"TestBad"}`,
		`{"Time":"` + at(0) + `","Action":"output","Package":"example.com/m/b","Test":"TestBad","Output":"    b_test.go:9: wrong answer\n"}`,
	}, "\n")
	if err := p.Read(strings.NewReader(events)); err != nil {
		t.Fatal(err)
	}
	p.Tick(t0.Add(90 * time.Second))
	if got, want := out.String(), "running: a 1m30s (TestSlow 1m30s), b 1m30s (TestBad 1m30s)\n"; got != want {
		t.Fatalf("tick: %q; want %q", got, want)
	}
	out.Reset()
	more := strings.Join([]string{
		`{"Time":"` + at(95) + `","Action":"pass","Package":"example.com/m/a","Test":"TestSlow/sub","Elapsed":94}`,
		`{"Time":"` + at(95) + `","Action":"pass","Package":"example.com/m/a","Test":"TestSlow","Elapsed":95}`,
		`{"Time":"` + at(95) + `","Action":"output","Package":"example.com/m/a","Output":"ok  \texample.com/m/a\t95s\n"}`,
		`{"Time":"` + at(95) + `","Action":"pass","Package":"example.com/m/a","Elapsed":95.2}`,
		`{"Time":"` + at(96) + `","Action":"fail","Package":"example.com/m/b","Test":"TestBad","Elapsed":96}`,
		`{"Time":"` + at(96) + `","Action":"fail","Package":"example.com/m/b","Elapsed":96.5}`,
		`{"Time":"` + at(96) + `","Action":"skip","Package":"example.com/m/c"}`,
		`# example.com/m/d`,
	}, "\n")
	if err := p.Read(strings.NewReader(more)); err != nil {
		t.Fatal(err)
	}
	want := "ok    a  95.2s\n--- FAIL: TestBad (b, 96.0s)\n    b_test.go:9: wrong answer\nFAIL  b  96.5s\n# example.com/m/d\n"
	if out.String() != want || !p.Failed() {
		t.Fatalf("got %q (failed %v); want %q", out.String(), p.Failed(), want)
	}
	out.Reset()
	p.Tick(t0.Add(200 * time.Second))
	if out.String() != "" {
		t.Fatalf("a tick with nothing running: %q", out.String())
	}
}
