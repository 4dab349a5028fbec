// Package plugins will own the plugins folder: discovery, operator files,
// validation, hot reload with an atomic swap and drain, and idle release.
// Loading never blocks requests: a new version is compiled and warmed
// beside the old one before it takes over.
package plugins
