package rpc

import (
	"strings"
	"testing"
)

// The quotas reach the store's Redis in every form --store takes: a
// Sentinel set or a cluster as well as one server; a URL of no form is
// refused naming the forms, not the password.
func TestQuotaClientTakesEveryStoreForm(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:1/0", "redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster", "redis-cluster://127.0.0.1:1,127.0.0.1:2"} {
		c, err := RedisConfig{URL: u}.QuotaClient()
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		c.Close()
	}
	_, err := RedisConfig{URL: "memcache://u:Secret-PW@127.0.0.1:1"}.QuotaClient()
	if err == nil || strings.Contains(err.Error(), "Secret-PW") || !strings.Contains(err.Error(), "redis+sentinel://") {
		t.Errorf("a URL of no form: %v; want the forms named, no password", err)
	}
}
