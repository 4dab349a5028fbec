// Package setting is the one rule for the numeric fields of the host's
// Config values, so that every Config reads the same way: the zero value
// of a field means its default, and "off" (no timeout, no bound, never)
// is Off, a negative value, never zero. Before the rule, zero meant the
// default in some fields and "none" or "never" in others, and a reader had
// to look each one up.
//
// Each Config resolves its defaults once, in a withDefaults method, with
// Or; the code that uses the Config then reads resolved values only. A
// package names Off for its users where the word says more (NoTimeout,
// NoBound); every such name is Off.
//
// A field whose zero already reads "off" to its users (a command-line
// flag, host.Config) is mapped onto the rule where the flag meets the
// Config, with ZeroIsOff.
package setting

// Off turns a setting off: no timeout, no bound, never. Any negative
// value counts as Off.
const Off = -1

// Number is the kind of value a setting is: a count, a size in bytes or a
// time.Duration.
type Number interface {
	~int | ~int32 | ~int64
}

// Or returns v, or def when v is zero: how a withDefaults method resolves
// a field. Off (any negative v) stays as it is.
func Or[T Number](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// IsOff reports whether v turns its setting off.
func IsOff[T Number](v T) bool { return v < 0 }

// ZeroIsOff maps a value whose zero means "off" (a flag such as
// serve --idle-timeout, where 0 never releases) onto the rule: zero
// becomes Off, anything else stays.
func ZeroIsOff[T Number](v T) T {
	if v == 0 {
		return Off
	}
	return v
}
