package plugins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

func TestOperatorHTTP(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-"), 0o600); err != nil {
		t.Fatal(err)
	}
	op, err := ParseOperator("api.json", []byte(`{"http": {"hosts": ["api.example.com", "*.example.org:8443", "http://127.0.0.1:8080"],
		"methods": ["GET", "POST"], "privateNetworks": ["10.0.0.0/8", "::ffff:192.168.1.1", "fd00::/8"], "maxRequests": 3,
		"maxRequestBytes": 10, "maxResponseBytes": 20, "timeout": "2s", "maxRedirects": 0, "rate": 5, "burst": 7, "caFile": "`+ca+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := op.pluginConfig(wasm.PluginConfig{}).Grants.HTTP
	var hosts, nets []string
	for _, h := range g.Hosts {
		hosts = append(hosts, h.String())
	}
	for _, n := range g.PrivateNetworks {
		nets = append(nets, n.String())
	}
	if strings.Join(hosts, " ") != "https://api.example.com:443 https://*.example.org:8443 http://127.0.0.1:8080" ||
		strings.Join(nets, " ") != "10.0.0.0/8 192.168.1.1/32 fd00::/8" || strings.Join(g.Methods, ",") != "GET,POST" ||
		g.MaxRequests != 3 || g.MaxRequestBytes != 10 || g.MaxResponseBytes != 20 || g.Timeout != 2*time.Second ||
		g.MaxRedirects != httpout.NoRedirects || g.Rate != 5 || g.Burst != 7 || g.CAFile != ca {
		t.Fatalf("grant %+v", g)
	}
	if (&Operator{}).pluginConfig(wasm.PluginConfig{}).Grants.HTTP.Granted() {
		t.Fatal("granted without \"http\"")
	}
	for file, want := range map[string]string{
		`{"http": {}}`:                                             `"http.hosts": is missing or empty`,
		`{"http": {"hosts": []}}`:                                  `"http.hosts": is missing or empty`,
		`{"http": {"hosts": "x"}}`:                                 `"http.hosts": is a string: write a list`,
		`{"http": {"hosts": ["ftp://x"]}}`:                         `"http.hosts[0]": "ftp://x": the scheme is http or https`,
		`{"http": {"hosts": ["x/path"]}}`:                          `without a path`,
		`{"http": {"hosts": ["x"], "methods": ["get"]}}`:           `"http.methods[0]": "get" is not a method`,
		`{"http": {"hosts": ["x"], "methods": ["CONNECT"]}}`:       `CONNECT is never allowed`,
		`{"http": {"hosts": ["x"], "privateNetworks": ["lan"]}}`:   `"lan" is not a network or an address`,
		`{"http": {"hosts": ["x"], "timeout": 5}}`:                 `"http.timeout": is a number`,
		`{"http": {"hosts": ["x"], "maxRedirects": 21}}`:           `from 0 to 20`,
		`{"http": {"hosts": ["x"], "caFile": "ca.pem"}}`:           `not an absolute path`,
		`{"http": {"hosts": ["x"], "caFile": "/nonexistent.pem"}}`: `"http.caFile": "/nonexistent.pem"`,
		`{"http": {"hosts": ["x"], "allowedHosts": []}}`:           `unknown field`,
	} {
		_, err := ParseOperator("api.json", []byte(file))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}
