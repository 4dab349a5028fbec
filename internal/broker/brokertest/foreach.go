package brokertest

import (
	"net/url"
	"testing"
)

// brokers are the two real brokers the integration tests run against, by
// name: mosquitto (an external process) and the host's embedded broker.
var brokers = []struct {
	name  string
	start func(testing.TB) *url.URL
}{
	{"mosquitto", StartMosquitto},
	{"embedded", StartEmbedded},
}

// ForEach runs test as a subtest against each real broker, named after
// it, with the URL of a broker started for that subtest.
func ForEach(t *testing.T, test func(t *testing.T, u *url.URL)) {
	t.Helper()
	for _, b := range brokers {
		t.Run(b.name, func(t *testing.T) { test(t, b.start(t)) })
	}
}
