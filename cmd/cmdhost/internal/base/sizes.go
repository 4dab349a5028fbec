package base

import (
	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/internal/bytesize"
)

// SizeFlag is a flag whose value is a size in bytes: 4MiB, 64KiB, 2GB or
// a plain number of bytes (bytesize.Parse), its default shown as 4MiB.
// Every byte-size flag is one, so that a size reads the same everywhere.
func SizeFlag(name string, def int64, usage, env string) *cli.GenericFlag {
	f := &cli.GenericFlag{Name: name, Value: bytesize.NewValue(def), Usage: usage}
	if env != "" {
		f.EnvVars = []string{env}
	}
	return f
}

// SizeOf is the bytes of c's size flag called name.
func SizeOf(c *cli.Context, name string) int64 {
	if v, ok := c.Generic(name).(*bytesize.Value); ok {
		return v.Bytes()
	}
	return 0
}

// IsSizeFlag reports whether f is a sizeFlag.
func IsSizeFlag(f cli.Flag) bool {
	g, ok := f.(*cli.GenericFlag)
	if !ok {
		return false
	}
	_, ok = g.Value.(*bytesize.Value)
	return ok
}
