package servecmd

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
)

// configFlag is serve's --config: a YAML file of serve's settings, one key
// per flag, named as the flag (exec-timeout: 10s).
func configFlag() cli.Flag {
	return &cli.StringFlag{Name: "config", Usage: "read serve's settings from a YAML `FILE` (keys are the flags' names, e.g. exec-timeout: 5s); a flag or environment variable wins over the file", EnvVars: []string{"CMDHOST_CONFIG"}}
}

// applyConfigFile sets each flag of c's command that the --config file
// names and neither the command line nor the environment set: flags, then
// the environment, then the file, then the defaults. The file is strict:
// an unknown key, a key given twice, a list or map where a value belongs,
// or a value the flag cannot parse is an error that names the file and the
// key.
func applyConfigFile(c *cli.Context) error {
	path := c.String("config")
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: not YAML: %v", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 { // an empty file sets nothing
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of settings, e.g. exec-timeout: 5s", path)
	}
	names := settingNames(c.Command.Flags)
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		name := key.Value
		where := fmt.Sprintf("%s:%d: %s", path, key.Line, name)
		switch {
		case !slices.Contains(names, name):
			return fmt.Errorf("%s: serve has no such setting%s (the keys are serve's flags: %s)", where, didYouMean(name, names), strings.Join(names, ", "))
		case seen[name]:
			return fmt.Errorf("%s: given twice", where)
		case value.Kind != yaml.ScalarNode:
			return fmt.Errorf("%s: want one value, not a list or mapping", where)
		case value.Tag == "!!null":
			return fmt.Errorf("%s: no value: give one or remove the key", where)
		}
		seen[name] = true
		if c.IsSet(name) { // the command line or the environment wins
			continue
		}
		if err := c.Set(name, value.Value); err != nil {
			return fmt.Errorf("%s: %q: %s", where, value.Value, valueProblem(base.FlagOf(c, name), name, err))
		}
	}
	return nil
}

// settingNames are the names of the flags a config file may set: every
// flag of the command but --config and --help.
func settingNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		if n := f.Names()[0]; n != "config" && n != "help" {
			names = append(names, n)
		}
	}
	return names
}

// didYouMean suggests the setting a misspelt key meant (closest).
func didYouMean(key string, names []string) string {
	if want := base.Closest(key, names); want != "" {
		return fmt.Sprintf(" (did you mean %s?)", want)
	}
	return ""
}

// valueProblem says what a setting of flag f wants, with an example;
// err is the flag's own error.
func valueProblem(f cli.Flag, name string, err error) string {
	if base.IsSizeFlag(f) { // bytesize's error names the forms it takes
		return err.Error()
	}
	switch f.(type) {
	case *cli.DurationFlag:
		return fmt.Sprintf("not a duration: give its unit, e.g. %s: 5s (or 500ms, 2m, 1h)", name)
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
		return "not a whole number"
	case *cli.BoolFlag:
		return "want true or false"
	}
	return "not a value of this setting"
}
