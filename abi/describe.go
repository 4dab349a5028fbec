package abi

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Description tags.
const (
	descVersion = 1 // u32: the ABI version
	descCommand = 2 // nested Command envelope, repeated
	descName    = 3 // string: the module's own name for itself, optional
)

// Command tags, inside a descCommand record.
const (
	cmdName        = 1 // string
	cmdIdempotent  = 2 // u8 boolean
	cmdTTL         = 3 // i64 milliseconds
	cmdContentType = 4 // string, repeated; none = any
	cmdTimeout     = 5 // i64 milliseconds; 0 = the host's default
	cmdTopic       = 6 // string: topic pattern; "" = the host's default
	cmdTrigger     = 7 // string: a trigger's topic filter; absent = a command
)

// MaxCommandName bounds a command name's length in bytes.
const MaxCommandName = 128

// Description is what a module says about itself at load.
type Description struct {
	Version  uint32    // the ABI version the module was built for
	Name     string    // the module's own name; informative
	Commands []Command // the commands it serves, at least one
}

// Command is one command a module serves.
type Command struct {
	Name string `json:"name"`
	// Idempotent says running the command twice with the same input is
	// harmless, which allows reusing its replies.
	Idempotent bool `json:"idempotent"`
	// ResponseTTL is how long a reply may be reused; only idempotent
	// commands may have one.
	ResponseTTL time.Duration `json:"responseTTL,omitempty"` // in JSON, nanoseconds
	// ContentTypes lists the request content types the command accepts;
	// empty accepts any.
	ContentTypes []string `json:"contentTypes,omitempty"`
	// Timeout is the command's default execution timeout; 0 leaves it to
	// the host.
	Timeout time.Duration `json:"timeout,omitempty"` // in JSON, nanoseconds
	// Topic is a request topic pattern; "" uses the host's default.
	Topic string `json:"topic,omitempty"`
	// Trigger, when set, makes the command a trigger: a handler the host
	// runs for each message published on this topic filter (levels that
	// are literal, a {token} whose value reaches the handler as a topic
	// token, + or, last, #), once the operator file confirms it, instead
	// of a command served on a request topic. A trigger has no Topic and
	// no ResponseTTL.
	Trigger string `json:"trigger,omitempty"`
}

// IsTrigger reports whether the command is a trigger (Trigger is set).
func (c *Command) IsTrigger() bool { return c.Trigger != "" }

// Accepts reports whether the command takes requests of content type ct.
func (c *Command) Accepts(ct string) bool {
	if len(c.ContentTypes) == 0 {
		return true
	}
	for _, t := range c.ContentTypes {
		if t == ct {
			return true
		}
	}
	return false
}

// Command returns the named command, or nil.
func (d *Description) Command(name string) *Command {
	for i := range d.Commands {
		if d.Commands[i].Name == name {
			return &d.Commands[i]
		}
	}
	return nil
}

// AppendDescription appends the encoding of d to dst and returns the result.
func AppendDescription(dst []byte, d *Description) []byte {
	dst = appendU32(dst, descVersion, d.Version)
	if d.Name != "" {
		dst = appendString(dst, descName, d.Name)
	}
	for i := range d.Commands {
		c := &d.Commands[i]
		var at int
		dst, at = beginRecord(dst, descCommand)
		dst = appendString(dst, cmdName, c.Name)
		if c.Idempotent {
			dst = appendU8(dst, cmdIdempotent, 1)
		}
		if c.ResponseTTL > 0 {
			dst = appendI64(dst, cmdTTL, c.ResponseTTL.Milliseconds())
		}
		for _, ct := range c.ContentTypes {
			dst = appendString(dst, cmdContentType, ct)
		}
		if c.Timeout > 0 {
			dst = appendI64(dst, cmdTimeout, c.Timeout.Milliseconds())
		}
		if c.Topic != "" {
			dst = appendString(dst, cmdTopic, c.Topic)
		}
		if c.Trigger != "" {
			dst = appendString(dst, cmdTrigger, c.Trigger)
		}
		dst = endRecord(dst, at)
	}
	return dst
}

// DecodeDescription decodes an encoded Description and checks it with
// Description.Validate.
func DecodeDescription(buf []byte) (*Description, error) {
	d := &Description{}
	rd := reader{buf: buf, singular: bits(descVersion, descName)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch tag {
		case descVersion:
			d.Version, err = u32(tag, v)
		case descName:
			d.Name = string(v)
		case descCommand:
			var c Command
			c, err = decodeCommand(v)
			d.Commands = append(d.Commands, c)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

func decodeCommand(buf []byte) (Command, error) {
	var c Command
	rd := reader{buf: buf, singular: bits(cmdName, cmdIdempotent, cmdTTL, cmdTimeout, cmdTopic, cmdTrigger)}
	for {
		tag, v, ok, err := rd.next()
		if err != nil {
			return c, fmt.Errorf("command: %w", err)
		}
		if !ok {
			return c, nil
		}
		var ms int64
		switch tag {
		case cmdName:
			c.Name = string(v)
		case cmdIdempotent:
			c.Idempotent, err = boolean(tag, v)
		case cmdTTL:
			ms, err = durationMillis(tag, v)
			c.ResponseTTL = time.Duration(ms) * time.Millisecond
		case cmdContentType:
			c.ContentTypes = append(c.ContentTypes, string(v))
		case cmdTimeout:
			ms, err = durationMillis(tag, v)
			c.Timeout = time.Duration(ms) * time.Millisecond
		case cmdTopic:
			c.Topic = string(v)
		case cmdTrigger:
			c.Trigger = string(v)
		}
		if err != nil {
			return c, fmt.Errorf("command %q: %w", c.Name, err)
		}
	}
}

// Validate reports the first way d is not a description the host can serve.
func (d *Description) Validate() error {
	if d.Version != Version {
		return fmt.Errorf("%w: ABI version %d is not supported (this host speaks version %d)", ErrMalformed, d.Version, Version)
	}
	if !utf8.ValidString(d.Name) {
		return malformed("module name is not UTF-8")
	}
	if len(d.Commands) == 0 {
		return malformed("the module declares no commands")
	}
	seen := make(map[string]bool, len(d.Commands))
	for i := range d.Commands {
		c := &d.Commands[i]
		if err := ValidateCommandName(c.Name); err != nil {
			return err
		}
		if seen[c.Name] {
			return malformed("command %q declared twice", c.Name)
		}
		seen[c.Name] = true
		if c.ResponseTTL < 0 || c.Timeout < 0 {
			return malformed("command %q: negative response TTL or timeout", c.Name)
		}
		if c.ResponseTTL > 0 && !c.Idempotent {
			return malformed("command %q: only idempotent commands may have a response TTL", c.Name)
		}
		for _, ct := range c.ContentTypes {
			if ct == "" || !utf8.ValidString(ct) {
				return malformed("command %q: empty or non-UTF-8 content type", c.Name)
			}
		}
		if !utf8.ValidString(c.Topic) || strings.ContainsAny(c.Topic, "+#\x00") {
			return malformed("command %q: topic pattern %q may not hold wildcards; use {token} levels", c.Name, c.Topic)
		}
		if c.IsTrigger() {
			if err := c.validateTrigger(); err != nil {
				return err
			}
		}
	}
	return nil
}

// MaxTriggerFilter bounds a trigger's topic filter, in bytes.
const MaxTriggerFilter = 1024

// validateTrigger checks what a trigger may not be: its filter's form
// (the host checks whose topics it may receive: ABI.md section 20), a
// request topic or a response TTL beside it.
func (c *Command) validateTrigger() error {
	f := c.Trigger
	switch {
	case len(f) > MaxTriggerFilter:
		return malformed("trigger %q: its topic filter is longer than %d bytes", c.Name, MaxTriggerFilter)
	case !utf8.ValidString(f) || strings.ContainsRune(f, 0):
		return malformed("trigger %q: topic filter %q is not UTF-8 without NUL", c.Name, f)
	case c.Topic != "":
		return malformed("trigger %q: a trigger has no request topic (it has the filter %q)", c.Name, f)
	case c.ResponseTTL > 0:
		return malformed("trigger %q: a trigger has no reply to reuse: no response TTL", c.Name)
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case l == "":
			return malformed("trigger %q: topic filter %q has an empty level", c.Name, f)
		case l == "#" && i != len(levels)-1:
			return malformed("trigger %q: topic filter %q: # must be the last level", c.Name, f)
		case l == "#" || l == "+":
		case strings.ContainsAny(l, "+#"):
			return malformed("trigger %q: topic filter %q: + and # must be whole levels", c.Name, f)
		}
	}
	return nil
}

// ValidateCommandName checks that name can be a command name: non-empty
// UTF-8 of at most MaxCommandName bytes that fits in one MQTT topic level.
func ValidateCommandName(name string) error {
	switch {
	case name == "":
		return malformed("a command has an empty name")
	case len(name) > MaxCommandName:
		return malformed("command name %.20q… is longer than %d bytes", name, MaxCommandName)
	case !utf8.ValidString(name):
		return malformed("command name %q is not UTF-8", name)
	case strings.ContainsAny(name, "/+#{}\x00") || strings.TrimSpace(name) != name:
		return malformed("command name %q may not hold '/', '+', '#', braces, NUL or surrounding spaces", name)
	}
	return nil
}
