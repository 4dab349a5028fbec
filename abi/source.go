//go:build !wasip1

package abi

import (
	"embed"
	"io/fs"
)

// source is this module's own code, for handler projects that carry the
// SDK with them (cmdhost new): the cmdhost modules are not published, so a
// project made from an installed binary gets its copy from the binary.
// Guests (GOOS=wasip1) do not carry it.
//
//go:embed *.go ABI.md go.mod
var source embed.FS

// Source returns this module's files: its Go files (tests and this one
// included: a copy leaves them out), ABI.md and go.mod.
func Source() fs.FS { return source }
