package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// ClashError is a version refused because another plugin serves one of
// its commands, or a topic overlapping one of its commands' topics: the
// plugin serving keeps it (LoadAll: the file that sorts first).
type ClashError struct {
	Plugin  string // the plugin refused
	Command string // its command that clashes
	Other   string // the plugin serving the command or the topic
	// OtherCommand is the command of Other: Command for a name clash,
	// the command whose topic overlaps for a topic clash.
	OtherCommand string
	// Topic and OtherTopic are the overlapping topic patterns; "" for a
	// name clash.
	Topic, OtherTopic string
	msg               string
}

func (e *ClashError) Error() string { return e.msg }

// Check reports whether the module bin, installed as plugin name in the
// folder, would be served next to what the Manager serves now: it loads
// it with the settings of name's operator file as a load would, and
// applies the same clash rule as a load (a command, or a topic
// overlapping one, already served by another plugin refuses it: a
// *ClashError). It changes nothing: `cmdhost plugin install` and `dev`
// run it on a Manager that loaded the folder offline (LoadAll), to refuse
// before copying a module a host serving that folder would refuse. An
// operator file that disables the plugin is an error too: the module would
// not be served.
func (m *Manager) Check(ctx context.Context, name string, bin []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := m.begin(); err != nil {
		return err
	}
	defer m.ops.Done()
	var op *Operator
	opPath := m.opPath(name)
	opBin, err := readOperatorFile(opPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("plugin %s: operator file: %w", name, err)
	default:
		if op, err = ParseOperator(opPath, opBin); err != nil {
			return fmt.Errorf("plugin %s: %w", name, err)
		}
		if !op.Enabled {
			return fmt.Errorf("plugin %s is disabled by %s (\"enabled\": false): a host would not serve it; set \"enabled\": true there, or remove that file", name, opPath)
		}
	}
	// The pin; a signature is the host's to check (its --trust keys).
	if err := CheckPin(name, sha(bin), op); err != nil {
		return err
	}
	p, topics, err := m.loadVersion(ctx, name, bin, op)
	if err != nil {
		return err
	}
	defer p.Close(context.Background()) // never served: nothing in flight
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.clash(name, p); err != nil {
		return err
	}
	return m.topicClash(name, topics)
}
