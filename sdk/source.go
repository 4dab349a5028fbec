//go:build !wasip1

package sdk

import (
	"embed"
	"io/fs"
)

// source is the code of the guest SDKs: this module's Go files and go.mod,
// and the Rust, C and AssemblyScript SDKs beside them. cmdhost new writes
// the SDK of a project's language into the project, from the binary,
// because the cmdhost modules are not published. Guests (GOOS=wasip1) do
// not carry it.
//
//go:embed *.go go.mod rust/Cargo.toml rust/src/*.rs c/cmdhost.h c/cmdhost.c assemblyscript/assembly/index.ts assemblyscript/package.json
var source embed.FS

// Source returns the SDKs' code: this module's Go files and go.mod at the
// top (tests and this one included: a copy leaves them out), rust/src, c,
// and assemblyscript/assembly with the package.json that pins its
// compiler; rust/Cargo.toml too.
func Source() fs.FS { return source }
