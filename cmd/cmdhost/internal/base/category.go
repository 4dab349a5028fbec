package base

import (
	"github.com/urfave/cli/v2"
)

// CategoryOf is f's Category.
func CategoryOf(f cli.Flag) string {
	if c, ok := f.(cli.CategorizableFlag); ok {
		return c.GetCategory()
	}
	return ""
}
