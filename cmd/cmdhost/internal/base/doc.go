// Package base is what cmdhost's command groups share, as cmd/go's
// internal/base is for the go command: usage errors and the help's
// layout, arguments after flags, exit statuses, the helpers that print a
// host's answers, size flags, the build's version and the local engine
// (call, plugin inspect and validate, dev). It imports no other package of
// the command line.
package base
