package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/eclipse/paho.golang/paho"

	"github.com/cmdhost/cmdhost/internal/testkit"
)

func SecretFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The embedded broker secured: serve --users with users written by
// `cmdhost user add`, a TLS listener, client certificates, and no
// anonymous listener off loopback unless --allow-anonymous.

const EmbeddedPassword = "Embedded-s3cr3t-pw"

// AddUser runs `cmdhost user add NAME --users FILE` with the password on
// standard input, as a script would.
func AddUser(t *testing.T, users, name, password string) {
	t.Helper()
	cmd := exec.Command(Binary, "user", "add", name, "--users", users)
	cmd.Stdin = strings.NewReader(password + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("user add %s: %v: %s", name, err, out)
	}
	if strings.Contains(string(out), password) {
		t.Fatalf("user add printed the password: %s", out)
	}
}

// Subscribe connects to broker and returns the messages on topic.
func Subscribe(t *testing.T, broker, topic string) <-chan *paho.Publish {
	t.Helper()
	u, err := url.Parse(broker)
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.Dial(t, u, "sub-"+t.Name())
	c.Subscribe(t, topic)
	return c.Messages()
}

// Attr returns the value of key=value in a slog text line.
func Attr(line, key string) string {
	m := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(key) + `=("(?:[^"\\]|\\.)*"|\S*)`).FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"`)
}

// CheckJSONShape fails unless out is JSON of the one shape every --json
// of cmdhost has (docs/cli.md): keys in lowerCamelCase, no null (an empty
// list is [] or left out), no string twice in a list.
func CheckJSONShape(t *testing.T, what, out string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", what, err, out)
		return
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			t.Errorf("%s: %s is null", what, path)
		case map[string]any:
			for k, e := range x {
				if r := []rune(k); len(r) == 0 || !unicode.IsLower(r[0]) {
					t.Errorf("%s: key %q of %s is not lowerCamelCase", what, k, path)
				}
				walk(path+"."+k, e)
			}
		case []any:
			seen := map[string]bool{}
			for i, e := range x {
				if s, ok := e.(string); ok {
					if seen[s] {
						t.Errorf("%s: %s lists %q twice", what, path, s)
					}
					seen[s] = true
				}
				walk(path+"["+string(rune('0'+i%10))+"]", e)
			}
		}
	}
	walk("$", v)
}

// GrepLines returns the lines of s that contain sub.
func GrepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// RepoRoot is the cmdhost source tree the tests build handler projects
// against.
func RepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func Port(t *testing.T, s *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ScrapeMetrics returns the text of the metrics at addr.
func ScrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second} // hang guard
	r, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// MetricValue is the value of the series named (with its labels) in a
// scrape; -1 when it is not there.
func MetricValue(t *testing.T, scrape, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(scrape)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// RunEnv is run with extra environment variables.
func RunEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"--cache-dir", CLICache()}, withStateDir(t, args)...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("running cmdhost: %v", err)
	}
	return stdout.String(), stderr.String(), 0
}

// GetProbe returns the status and body of GET url, or 0 when nothing
// answers.
func GetProbe(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
