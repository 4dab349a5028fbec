// Package app is cmdhost's command tree: the global flags and every
// command group's commands under one urfave/cli app, which main runs. Its
// tests check the tree as a whole: the docs' commands and flags
// (docs/cli.md's tables, rewritten with -update-docs), the help's width,
// usage errors and the shape of every --json output.
package app
