package rpc_test

// Loading of the METL conformance cases (YAML, gopkg.in/yaml.v3) and of
// their defaults (defaults.toml, a tiny TOML subset parser), plus helpers
// to read the resulting generic trees.
//
// The cases are read where they live, ../shared/conformance relative to the
// repository root; they are never copied into the project.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// conformanceDir finds the cases: $CMDHOST_CONFORMANCE, else
// ../shared/conformance relative to the repository root (the first
// directory holding go.mod, walking up from the working directory). ok is
// false when the directory is absent.
func conformanceDir() (dir string, ok bool, err error) {
	if dir := os.Getenv("CMDHOST_CONFORMANCE"); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return dir, false, fmt.Errorf("CMDHOST_CONFORMANCE=%s: not a folder of METL cases (one holding CommandExecutor/)", dir)
		}
		return dir, true, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false, err
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			return "", false, fmt.Errorf("no go.mod above %s", wd)
		}
		root = up
	}
	dir = filepath.Join(root, "..", "shared", "conformance")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return dir, false, nil
	}
	return dir, true, nil
}

// conformanceRequired reports whether a missing conformance folder fails
// the conformance test instead of skipping it: it does under CI (the CI
// variable set to true), where an absent folder is a broken checkout, not
// a developer's choice.
func conformanceRequired() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// tree is a YAML or TOML mapping: keys present with a nil value are METL's
// explicit nulls, absent keys are omitted ones.
type tree = map[string]any

// loadCase reads one METL YAML case.
func loadCase(path string) (tree, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	m, ok := normalize(doc).(tree)
	if !ok {
		return nil, fmt.Errorf("%s: not a YAML mapping", filepath.Base(path))
	}
	return m, nil
}

// normalize turns map[any]any (YAML mappings with non-string keys, such as
// execution-counts) into tree, recursively.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any:
		m := make(tree, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	}
	return v
}

// overlay returns base with over's keys (explicit nulls included) on top;
// neither is modified. Only the top level is merged: a key in over
// replaces the default value whole.
func overlay(base, over tree) tree {
	out := make(tree, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// sub returns the mapping under the dotted path, or nil.
func sub(m tree, path string) tree {
	for _, k := range strings.Split(path, ".") {
		next, _ := m[k].(tree)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// checkKeys reports the first key of m that is not among known.
func checkKeys(m tree, what string, known ...string) error {
	for k := range m {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("the harness does not know %s key %q", what, k)
		}
	}
	return nil
}

func asString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) {
			return int(n), true
		}
	}
	return 0, false
}

func asBool(v any) (bool, bool) {
	b, ok := v.(bool)
	return b, ok
}

// asDuration reads a METL Duration: {hours, minutes, seconds, milliseconds,
// microseconds}.
func asDuration(v any) (time.Duration, error) {
	m, ok := v.(tree)
	if !ok {
		return 0, fmt.Errorf("duration %v is not a mapping", v)
	}
	units := map[string]time.Duration{
		"hours": time.Hour, "minutes": time.Minute, "seconds": time.Second,
		"milliseconds": time.Millisecond, "microseconds": time.Microsecond,
	}
	var d time.Duration
	for k, e := range m {
		u, ok := units[k]
		if !ok {
			return 0, fmt.Errorf("duration: unknown unit %q", k)
		}
		n, ok := asInt(e)
		if !ok {
			return 0, fmt.Errorf("duration: %s %v is not an integer", k, e)
		}
		d += time.Duration(n) * u
	}
	return d, nil
}

// parseTOML parses the TOML subset defaults.toml uses: [dotted.section]
// headers, key = value lines, # comments; values are basic strings,
// integers, booleans, arrays and inline tables, each on one line. Keys are
// bare or basic strings. The result has the same shape as a YAML tree.
func parseTOML(src string) (tree, error) {
	root := tree{}
	cur := root
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(stripComment(line))
		if line == "" {
			continue
		}
		fail := func(err error) (tree, error) { return nil, fmt.Errorf("defaults.toml:%d: %w", n+1, err) }
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") || strings.HasPrefix(line, "[[") {
				return fail(errors.New("unsupported table header"))
			}
			cur = root
			for _, k := range strings.Split(strings.Trim(line, "[]"), ".") {
				k = strings.TrimSpace(k)
				next, ok := cur[k].(tree)
				if !ok {
					next = tree{}
					cur[k] = next
				}
				cur = next
			}
			continue
		}
		p := &tomlParser{s: line}
		key, err := p.key()
		if err != nil {
			return fail(err)
		}
		if !p.eat('=') {
			return fail(errors.New("want '=' after the key"))
		}
		v, err := p.value()
		if err != nil {
			return fail(err)
		}
		if p.skip(); p.i != len(p.s) {
			return fail(fmt.Errorf("trailing %q", p.s[p.i:]))
		}
		cur[key] = v
	}
	return root, nil
}

// stripComment drops a # comment outside strings.
func stripComment(line string) string {
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && in:
			i++
		case c == '"':
			in = !in
		case c == '#' && !in:
			return line[:i]
		}
	}
	return line
}

type tomlParser struct {
	s string
	i int
}

func (p *tomlParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *tomlParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *tomlParser) key() (string, error) {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '"' {
		return p.str()
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			break
		}
		p.i++
	}
	if p.i == start {
		return "", fmt.Errorf("want a key at %q", p.s[start:])
	}
	return p.s[start:p.i], nil
}

func (p *tomlParser) str() (string, error) {
	start := p.i
	p.i++ // opening quote
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return strconv.Unquote(p.s[start:p.i])
		}
		p.i++
	}
	return "", errors.New("unterminated string")
}

func (p *tomlParser) value() (any, error) {
	p.skip()
	if p.i >= len(p.s) {
		return nil, errors.New("missing value")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '[':
		p.i++
		arr := []any{}
		for {
			if p.eat(']') {
				return arr, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			if !p.eat(',') {
				if !p.eat(']') {
					return nil, errors.New("want ',' or ']' in an array")
				}
				return arr, nil
			}
		}
	case c == '{':
		p.i++
		tbl := tree{}
		if p.eat('}') {
			return tbl, nil
		}
		for {
			k, err := p.key()
			if err != nil {
				return nil, err
			}
			if !p.eat('=') {
				return nil, errors.New("want '=' in an inline table")
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			tbl[k] = v
			if p.eat('}') {
				return tbl, nil
			}
			if !p.eat(',') {
				return nil, errors.New("want ',' or '}' in an inline table")
			}
		}
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, nil
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-0123456789_", p.s[p.i]) >= 0 {
			p.i++
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(p.s[start:p.i], "_", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q: only strings, integers, booleans, arrays and inline tables are supported", p.s[start:])
		}
		return int(n), nil
	}
}
