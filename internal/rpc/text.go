package rpc

import (
	"fmt"

	"github.com/cmdhost/cmdhost/internal/session"
)

// The protocol's text on the wire. Every string the host publishes is one
// brokers accept (session.WireProblem says which): text the host writes
// or quotes is cleaned to a bound (session.CleanText, cleanMessage); a
// handler's metadata, which must arrive as it was or not at all, is
// checked (metadataProblem) and left out when it fails.

// Bounds of the strings the host writes.
const (
	// MaxStatusMessage bounds __stMsg, in bytes.
	MaxStatusMessage = 1024
	// MaxPropertyValue bounds __propName, __propVal and the other
	// protocol properties the host quotes from a request, in bytes.
	MaxPropertyValue = 1024
	// MaxMetadataKey and MaxMetadataValue bound a handler's metadata, in
	// bytes; a longer pair is not sent.
	MaxMetadataKey   = 1024
	MaxMetadataValue = 16 << 10
)

// cleanText is session.CleanText: s as brokers accept it, in at most
// limit bytes.
func cleanText(s string, limit int) string { return session.CleanText(s, limit) }

// cleanMessage is cleanText for a status message (MaxStatusMessage), cut
// in the middle rather than at the end (session.CleanMiddle).
func cleanMessage(s string) string { return session.CleanMiddle(s, MaxStatusMessage) }

// metadataProblem says why a metadata pair cannot be sent as it is, or
// returns "" when it can.
func metadataProblem(k, v string) string {
	switch {
	case len(k) > MaxMetadataKey:
		return fmt.Sprintf("key of %d bytes, more than %d", len(k), MaxMetadataKey)
	case len(v) > MaxMetadataValue:
		return fmt.Sprintf("value of %d bytes, more than %d", len(v), MaxMetadataValue)
	}
	if p := session.WireProblem(k); p != "" {
		return "key: " + p
	}
	if p := session.WireProblem(v); p != "" {
		return "value: " + p
	}
	return ""
}
