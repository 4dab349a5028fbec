// Package servecmd is cmdhost serve, which reads its flags and --config
// file into one host.Config and runs the host, and cmdhost user, which
// edits the embedded broker's users file. Its tests start real hosts:
// serving, the embedded broker's security, the store's exactly-once
// guarantees through kills and failovers, triggers.
package servecmd
