package plugins

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/cmdhost/cmdhost/internal/topic"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// The operator file's "publish": where, and how much, the plugin may
// publish (docs/messages.md).
//
//	"publish": {
//	  "topics": ["devices/{executorId}/events/#", "alarms/+"],
//	  "maxMessages": 16,      a call's messages
//	  "maxBytes": 1048576,    a call's payload bytes
//	  "rate": 100,            messages a second, the plugin's calls together
//	  "burst": 1000
//	}
//
// Without it the plugin publishes nothing.
var publishFields = []string{"topics", "maxMessages", "maxBytes", "rate", "burst"}

// maxPublishTopics bounds the topics of a grant.
const maxPublishTopics = 64

func (p *opParser) publish(raw json.RawMessage, at string) (*wasm.PublishGrant, error) {
	fields, err := p.object(raw, at, publishFields)
	if err != nil {
		return nil, err
	}
	g := &wasm.PublishGrant{}
	for _, f := range fields {
		where := join(at, f.key)
		switch f.key {
		case "topics":
			g.Topics, err = p.publishTopics(f.raw, where)
		case "maxMessages":
			g.MaxMessages, err = p.integer(f.raw, where, 1, 1<<16)
		case "maxBytes":
			g.MaxBytes, err = p.size(f.raw, where, 1, wasm.MaxResponseBytesLimit)
		case "rate":
			var n int
			n, err = p.integer(f.raw, where, 1, math.MaxInt32)
			g.Rate = float64(n)
		case "burst":
			g.Burst, err = p.integer(f.raw, where, 1, math.MaxInt32)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(g.Topics) == 0 {
		return nil, p.errf(join(at, "topics"), `is missing or empty: name the topics the plugin may publish to, e.g. ["devices/{executorId}/events/#"]`)
	}
	return g, nil
}

// publishTopics reads "topics": a list of topic grants (topic.ParseGrant).
func (p *opParser) publishTopics(raw json.RawMessage, at string) ([]topic.Grant, error) {
	list, err := p.strList(raw, at, `["devices/{executorId}/events/#"]`, maxPublishTopics)
	if err != nil {
		return nil, err
	}
	out := make([]topic.Grant, 0, len(list))
	for i, s := range list {
		g, err := topic.ParseGrant(s)
		if err != nil {
			return nil, p.errf(fmt.Sprintf("%s[%d]", at, i), "%v", err)
		}
		out = append(out, g)
	}
	return out, nil
}
