package base

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// HelpWidth is the widest line of any --help: a terminal's 100 columns.
// urfave/cli wraps nothing by default and puts every flag on one line
// (serve's had lines of 650 characters), its categories sorted by name.
const HelpWidth = 100

// flagColumn is the widest flag column: a flag whose names and
// placeholder are wider has its usage on the lines below it.
const flagColumn = 30

// PrintHelp is urfave/cli's HelpPrinter for cmdhost: its templates, with
// text wrapped at helpWidth and the flags shown by flagHelp. main sets
// it (cli.HelpPrinter is urfave/cli's package variable).
func PrintHelp(w io.Writer, templ string, data any) {
	cli.HelpPrinterCustom(w, flagTemplates.Replace(templ), data, map[string]any{
		"wrapAt":   func() int { return HelpWidth },
		"flagHelp": flagHelp,
	})
}

// flagTemplates swaps urfave/cli's flag lists in its help templates for
// flagHelp.
var flagTemplates = strings.NewReplacer(
	`{{template "visibleFlagCategoryTemplate" .}}`, `{{flagHelp .VisibleFlags}}`,
	`{{template "visibleFlagTemplate" .}}`, `{{flagHelp .VisibleFlags}}`,
)

// flagHelp writes flags in their categories, in the order the flags
// come (serveFlags sorts them), the uncategorised first; each flag's
// usage wrapped to helpWidth beside (or under) its names.
func flagHelp(flags []cli.Flag) string {
	var order []string
	byCat := map[string][]cli.Flag{}
	width := 0
	for _, f := range flags {
		cat := CategoryOf(f)
		if _, seen := byCat[cat]; !seen {
			order = append(order, cat)
		}
		byCat[cat] = append(byCat[cat], f)
		if n := utf8.RuneCountInString(FlagNames(f)); n <= flagColumn {
			width = max(width, n)
		}
	}
	if i := slices.Index(order, ""); i > 0 { // the uncategorised first
		order = append([]string{""}, slices.Delete(order, i, i+1)...)
	}
	var b strings.Builder
	for _, cat := range order {
		if cat != "" {
			fmt.Fprintf(&b, "\n\n   %s:", cat)
		}
		for _, f := range byCat[cat] {
			b.WriteString("\n" + flagLine(f, width))
		}
	}
	return b.String()
}

// flagLine is one flag's help: "   --name PLACEHOLDER  usage…", the usage
// starting at column 3+width+2 and wrapped there.
func flagLine(f cli.Flag, width int) string {
	names := FlagNames(f)
	indent := strings.Repeat(" ", 3+width+2)
	usage := wrapWords(flagUsage(f), HelpWidth-len(indent))
	lines := strings.Split(usage, "\n")
	var b strings.Builder
	b.WriteString("   " + names)
	if n := utf8.RuneCountInString(names); n <= width {
		b.WriteString(strings.Repeat(" ", width+2-n) + lines[0])
		lines = lines[1:]
	}
	for _, l := range lines {
		b.WriteString("\n" + indent + l)
	}
	return b.String()
}

// FlagNames is "--name PLACEHOLDER, -n" ("…" after it for a flag given
// again and again).
func FlagNames(f cli.Flag) string {
	var names []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	s := names[0]
	if ph := placeholder(f); ph != "" {
		s += " " + ph
		if sf, ok := f.(cli.DocGenerationSliceFlag); ok && sf.IsSliceFlag() {
			s += "…"
		}
	}
	if len(names) > 1 {
		s += ", " + strings.Join(names[1:], ", ")
	}
	return s
}

// placeholder is the name of f's value: the `word` of its usage, else
// one its kind says (SIZE, DURATION, N); "" for a flag without a value.
func placeholder(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok || !df.TakesValue() {
		return ""
	}
	if ph, _ := UnquoteUsage(df.GetUsage()); ph != "" {
		return ph
	}
	switch f.(type) {
	case *cli.DurationFlag:
		return "DURATION"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
		return "N"
	}
	if IsSizeFlag(f) {
		return "SIZE"
	}
	return "VALUE"
}

// flagUsage is f's usage, its default (a size as 4MiB; none for a bool)
// and its environment variables.
func flagUsage(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	_, usage := UnquoteUsage(df.GetUsage())
	if _, isBool := f.(*cli.BoolFlag); !isBool {
		if def := df.GetDefaultText(); def != "" {
			usage += " (default: " + def + ")"
		}
	}
	if env := df.GetEnvVars(); len(env) > 0 {
		usage += " [$" + strings.Join(env, ", $") + "]"
	}
	return usage
}

// wrapWords breaks s into lines of at most width columns at spaces (a
// word longer than width has a line of its own).
func wrapWords(s string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(s) {
		n := utf8.RuneCountInString(w)
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteString("\n")
			col = 0
		default:
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}
