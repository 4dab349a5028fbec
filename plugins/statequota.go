package plugins

import "github.com/cmdhost/cmdhost/internal/state"

// StateQuota is the bound of plugin name's state namespace as its
// serving version's operator file sets it ("state": {"maxKeys",
// "maxBytes"}); zero fields, or a plugin not serving: the store's
// defaults. The admin ops write a plugin's namespace within it, as the
// plugin's calls do.
func (m *Manager) StateQuota(name string) state.Quota {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[name]; e != nil && e.cur != nil && e.cur.op != nil && e.cur.op.State != nil {
		return e.cur.op.State.Own
	}
	return state.Quota{}
}
