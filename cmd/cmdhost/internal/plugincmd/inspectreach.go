package plugincmd

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	pluginmgr "github.com/cmdhost/cmdhost/plugins"
)

// reachView is one capability in `plugin inspect`: what the module asks
// for (the functions it imports, the triggers it declares) beside what
// its operator file grants, so that an operator grants what a module
// needs, step by step, and sees what it was granted and does not use. A
// module asking for what it is not granted loads: each call gets an error
// that names the missing grant (docs/plugins.md, What a plugin may do).
type reachView struct {
	Capability string `json:"capability"`
	// Asks are the imports (without the module name) or the triggers that
	// ask for it; none: the module does not ask.
	Asks []string `json:"asks,omitempty"`
	// Granted is what the operator file grants; "" when nothing (and
	// Missing says what to write).
	Granted string `json:"granted,omitempty"`
	// Missing is the operator file key to write, for what is asked and
	// not granted.
	Missing string `json:"missing,omitempty"`
}

// reachOf lists the capabilities the module asks for or op grants:
// imports are "module.function" (wasm.Plugin.Imports). Values are never
// shown, only names: a config or secret value may be a secret.
func reachOf(imports []string, desc *abi.Description, op *pluginmgr.Operator) []reachView {
	asks := func(mod string, match func(string) bool) []string {
		var out []string
		for _, imp := range imports {
			m, fn, _ := strings.Cut(imp, ".")
			if m == mod && match(fn) && !slices.Contains(out, fn) {
				out = append(out, fn)
			}
		}
		return out
	}
	host := func(names ...string) []string {
		return asks(abi.HostModule, func(fn string) bool { return slices.Contains(names, fn) })
	}
	prefix := func(p string) []string {
		return asks(abi.HostModule, func(fn string) bool { return strings.HasPrefix(fn, p) })
	}
	if op == nil {
		op = &pluginmgr.Operator{}
	}
	var out []reachView
	add := func(v reachView, missing string) {
		if len(v.Asks) == 0 && v.Granted == "" {
			return
		}
		if len(v.Asks) > 0 && v.Granted == "" {
			v.Missing = missing
		}
		out = append(out, v)
	}

	// Always given, bounded by the host: shown when asked for.
	always := func(v reachView) {
		if len(v.Asks) > 0 {
			add(v, "")
		}
	}
	always(reachView{Capability: "variables", Asks: prefix("var_"), Granted: "always (the plugin's own, in memory)"})
	always(reachView{Capability: "nested calls", Asks: host(abi.FnInvoke), Granted: "always (for the request's caller: the called command's \"allow\" decides)"})
	state := "always (the plugin's own namespace, on a host with a state store"
	if op.State != nil {
		var shared []string
		for name, access := range op.State.Shared {
			shared = append(shared, name+" ("+access.String()+")")
		}
		sort.Strings(shared)
		if len(shared) > 0 {
			state += "; shared: " + strings.Join(shared, ", ")
		}
	}
	always(reachView{Capability: "state", Asks: prefix("state_"), Granted: state + ")"})

	// Granted by the operator file.
	var config []string
	if names := sortedKeys(op.Config); len(names) > 0 {
		config = append(config, "config: "+strings.Join(names, ", "))
	}
	if names := op.SecretNames(); len(names) > 0 {
		config = append(config, "secrets: "+strings.Join(names, ", "))
	}
	add(reachView{Capability: "config", Asks: host(abi.FnConfigGet), Granted: strings.Join(config, "; ")},
		`"config": {"NAME": "VALUE"}, or "secrets": {"NAME": "/path/to/file"}`)
	var topics, hosts []string
	if op.Publish != nil {
		topics = strs(op.Publish.Topics)
	}
	if op.HTTP != nil {
		hosts = strs(op.HTTP.Hosts)
	}
	add(reachView{Capability: "publish", Asks: host(abi.FnPublish), Granted: grantedList("topics", topics)},
		`"publish": {"topics": ["TOPIC/#"]}`)
	add(reachView{Capability: "http", Asks: host(abi.FnHTTPRequest), Granted: grantedList("hosts", hosts)},
		`"http": {"hosts": ["api.example.com"]}`)
	for _, c := range desc.Commands {
		if !c.IsTrigger() {
			continue
		}
		v := reachView{Capability: "trigger " + c.Name, Asks: []string{c.Trigger}}
		if s, ok := op.Triggers[c.Name]; ok {
			v.Granted = "subscribed"
			if s.Topic != nil {
				v.Granted += " on " + s.Topic.String()
			}
		}
		add(v, fmt.Sprintf(`"triggers": {%q: {}}`, c.Name))
	}
	var mounts []string
	for _, m := range op.Mounts {
		mounts = append(mounts, m.GuestDir)
	}
	add(reachView{Capability: "filesystem", Asks: asks("wasi_snapshot_preview1", func(fn string) bool {
		return strings.HasPrefix(fn, "path_") || fn == "fd_readdir"
	}), Granted: grantedList("mounts", mounts)}, `"grants": {"mounts": [{"host": "/srv/data", "guest": "/data"}]}`)
	// Most runtimes import environ_get at start, whatever the handler
	// reads: an environment not granted is shown empty, not missing.
	env := grantedList("variables", sortedKeys(op.Env))
	envAsks := asks("wasi_snapshot_preview1", func(fn string) bool { return fn == "environ_get" })
	if env == "" && len(envAsks) > 0 {
		env = `none (the guest sees no variables; "grants": {"env": {...}} gives some)`
	}
	add(reachView{Capability: "environment", Asks: envAsks, Granted: env}, "")
	return out
}

// strs is each item's String.
func strs[T fmt.Stringer](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.String()
	}
	return out
}

// grantedList is "what: a, b", or "" for none.
func grantedList(what string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return what + ": " + strings.Join(items, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printReach writes the reach table of `plugin inspect`.
func printReach(w io.Writer, reach []reachView, operator string) error {
	if len(reach) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nwhat it asks for, and what %s grants:\n", orNoOperator(operator))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPABILITY\tASKS FOR\tGRANTED")
	for _, v := range reach {
		granted := v.Granted
		switch {
		case v.Missing != "":
			granted = "not granted: add " + v.Missing
		case len(v.Asks) == 0:
			granted += " (not asked for)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Capability, base.OrDash(strings.Join(v.Asks, ", ")), granted)
	}
	return tw.Flush()
}

func orNoOperator(operator string) string {
	if operator == "" {
		return "the operator file (none)"
	}
	return operator
}
