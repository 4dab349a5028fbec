package plugins

// Names returns the plugins the folder holds now, in file name order: the
// NAME of every NAME.wasm, dotfiles skipped (the folder's rules,
// folder.go). The host counts them to say how far its first load is.
func (m *Manager) Names() ([]string, error) { return m.scan() }
