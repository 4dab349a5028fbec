package plugins

import (
	"encoding/json"
	"math"

	"github.com/cmdhost/cmdhost/internal/wasm"
)

// The operator file's "state": what the plugin may do with the state
// store (docs/state.md).
//
//	"state": {
//	  "maxKeys": 10000,                  the plugin's namespace: keys
//	  "maxBytes": 16777216,              and bytes (keys plus values)
//	  "shared": {"devices": "read", "jobs": "read-write"},
//	  "commitErrors": true               commit the writes of error replies too
//	}
//
// The plugin's own namespace is always granted; a shared namespace only
// when "shared" names it.
var stateFields = []string{"maxKeys", "maxBytes", "shared", "commitErrors"}

// maxStateBound is the largest "maxKeys" or "maxBytes": 2^53, the
// largest whole number JSON carries exactly.
const maxStateBound = 1 << 53

func (p *opParser) state(raw json.RawMessage, at string) (*wasm.StateGrant, error) {
	fields, err := p.object(raw, at, stateFields)
	if err != nil {
		return nil, err
	}
	g := &wasm.StateGrant{}
	for _, f := range fields {
		where := join(at, f.key)
		switch f.key {
		case "maxKeys":
			var n int
			n, err = p.integer(f.raw, where, 1, min(maxStateBound, math.MaxInt))
			g.Own.MaxKeys = int64(n)
		case "maxBytes":
			var n int
			n, err = p.size(f.raw, where, 1, min(maxStateBound, math.MaxInt))
			g.Own.MaxBytes = int64(n)
		case "commitErrors":
			err = p.boolean(f.raw, where, &g.CommitErrors)
		case "shared":
			g.Shared, err = p.shared(f.raw, where)
		}
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// shared reads "shared": namespace name → "read" or "read-write".
func (p *opParser) shared(raw json.RawMessage, at string) (map[string]wasm.StateAccess, error) {
	names, err := p.strMap(raw, at, func(where, key string) error {
		if err := wasm.CheckSharedName(key); err != nil {
			return p.errf(where, "%v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]wasm.StateAccess, len(names))
	for name, access := range names {
		a, err := wasm.ParseStateAccess(access)
		if err != nil {
			return nil, p.errf(join(at, name), "%v", err)
		}
		out[name] = a
	}
	return out, nil
}
