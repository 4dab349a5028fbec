// Package registry is the command line's side of OCI registries: the
// registry flags, their configuration, and a module pulled from an
// oci:// reference into a file, with its signature, for the commands
// that take one (call, plugin install, plugin rollout, plugin pull).
package registry
