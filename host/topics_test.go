package host_test

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/plugins"
)

// The host's own topics (admin ops, events) are under
// plugins.HostTopicPrefix, where no plugin may serve: a module declaring
// an admin op's or the events' pattern is refused.
func TestHostTopicsReserved(t *testing.T) {
	for _, topic := range []string{host.AdminTopic("x", "list"), host.EventsTopic("x")} {
		if !strings.HasPrefix(topic, plugins.HostTopicPrefix+"/") {
			t.Errorf("%s is not under %s/", topic, plugins.HostTopicPrefix)
		}
	}
	patterns := []string{plugins.HostTopicPrefix + "/{executorId}/events"}
	for _, c := range (&host.Admin{}).Commands() {
		patterns = append(patterns, c.Topic)
	}
	for _, p := range patterns {
		err := plugins.CheckTopics(&abi.Description{Commands: []abi.Command{{Name: "steal", Topic: p}}})
		if err == nil || !strings.Contains(err.Error(), "the host's own topics") {
			t.Errorf("a plugin declaring %s: %v, want a refusal", p, err)
		}
	}
}
