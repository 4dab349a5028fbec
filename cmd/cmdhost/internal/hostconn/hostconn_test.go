package hostconn

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/host/admin"
)

// An --executor with a comma or a glob names a fleet; a plain id names
// one host.
func TestFleetSyntax(t *testing.T) {
	for executor, want := range map[string]bool{
		"edge-1": false, "edge-*": true, "edge-1,core-1": true, "edge-?": true, "edge-[12]": true, "": false,
	} {
		if got := FleetSyntax(executor); got != want {
			t.Errorf("FleetSyntax(%q) = %v; want %v", executor, got, want)
		}
	}
}

// A host's line names its replica only when it has one of its own: a
// lone host whose client id is its executor id is just the host.
func TestHostLine(t *testing.T) {
	for _, c := range []struct {
		executor string
		id       admin.ReplicaID
		want     string
	}{
		{"edge-1", admin.ReplicaID{}, "host edge-1"},
		{"edge-1", admin.ReplicaID{ClientID: "edge-1"}, "host edge-1"},
		{"edge-1", admin.ReplicaID{ClientID: "edge-1-a", Share: "edge"}, "host edge-1, replica edge-1-a (share group edge)"},
		{"edge-1", admin.ReplicaID{ClientID: "edge-1-b"}, "host edge-1, replica edge-1-b"},
		{"edge\x1b[2J", admin.ReplicaID{}, "host edge\uFFFD[2J"},
	} {
		if got := HostLine(c.executor, c.id); got != c.want {
			t.Errorf("HostLine(%q, %+v) = %q; want %q", c.executor, c.id, got, c.want)
		}
	}
}

// --broker takes an MQTT URL (mqtt, tcp; mqtts, tls, ssl) with a host;
// a password in it is refused, since it would show in process listings.
func TestBrokerURL(t *testing.T) {
	for _, ok := range []string{"mqtt://127.0.0.1:11883", "mqtts://broker:8883", "tcp://b:1883", "tls://b:8883", "ssl://b:8883", "mqtt://alice@b:1883"} {
		if u, err := brokerURL(ok); err != nil || u.String() != ok {
			t.Errorf("brokerURL(%q) = %v, %v", ok, u, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:11883", "http://b:80", "mqtt://", "mqtt://alice:pw@b:1883", "mqtt://alice:p/w@b:1883"} {
		if u, err := brokerURL(bad); err == nil {
			t.Errorf("brokerURL(%q) = %v; want an error", bad, u)
		} else if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "p/w") {
			t.Errorf("brokerURL(%q): %v shows the password", bad, err)
		}
	}
}
