// Package statecmd is cmdhost state: the handlers' state store listed,
// read, written, exported and imported, through a running host's admin
// ops or offline on a state folder.
package statecmd
