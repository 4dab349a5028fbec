package adminops_test

import (
	"strings"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/adminops"
	"github.com/cmdhost/cmdhost/plugins"
)

// The host's own topics (admin ops, events) are under
// plugins.HostTopicPrefix, where no plugin may serve: a module declaring
// an admin op's or the events' pattern is refused.
func TestHostTopicsReserved(t *testing.T) {
	for _, topic := range []string{admin.Topic("x", admin.OpList), admin.EventsTopic("x"),
		admin.ReplicaTopic("x", "c1", admin.OpList), admin.ReplicasTopic("x")} {
		if !strings.HasPrefix(topic, plugins.HostTopicPrefix+"/") {
			t.Errorf("%s is not under %s/", topic, plugins.HostTopicPrefix)
		}
	}
	patterns := []string{plugins.HostTopicPrefix + "/{executorId}/events", plugins.HostTopicPrefix + "/{executorId}/replicas"}
	m, dir := newManager(t)
	for _, c := range newOps(t, adminops.Config{Manager: m, Dir: dir, ClientID: "c1", ShareGroup: "g"}).Commands() {
		patterns = append(patterns, c.Topic)
	}
	for _, p := range patterns {
		err := plugins.CheckTopics(&abi.Description{Commands: []abi.Command{{Name: "steal", Topic: p}}})
		if err == nil || !strings.Contains(err.Error(), "the host's own topics") {
			t.Errorf("a plugin declaring %s: %v, want a refusal", p, err)
		}
	}
}
