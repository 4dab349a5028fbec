package plugins

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/bytesize"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/httpout"
	"github.com/cmdhost/cmdhost/internal/setting"
	"github.com/cmdhost/cmdhost/internal/wasm"
)

// OperatorExt is the extension of a plugin's operator file: NAME.json
// beside NAME.wasm.
const OperatorExt = ".json"

// MaxMemoryPages is the most memory a wasm32 instance can address: 65536
// pages of 64 KiB (4 GiB).
const MaxMemoryPages = 65536

// MaxTableEntries is the largest table limit an operator file may set:
// 2^27 entries, the largest table wazero accepts (1 GiB per instance).
const MaxTableEntries = 1 << 27

// Operator is a plugin's operator file (NAME.json beside NAME.wasm),
// validated: the operator's settings for the plugin, which override the
// module's declared defaults and the host's (Config.Plugin). Zero and nil
// fields are not set by the file.
type Operator struct {
	// File is the operator file's path.
	File string
	// Enabled false ("enabled": false) keeps the plugin from being served;
	// the module is then not even loaded. Default true.
	Enabled bool
	// Timeout is the execution timeout of every command of the plugin
	// ("timeout"); 0: not set.
	Timeout time.Duration
	// OnTimeout is the on_timeout policy of every command of the plugin
	// ("onTimeout" and "retries"); nil: not set (fail).
	OnTimeout *OnTimeout
	// Commands are per-command settings ("commands": {"NAME": {"timeout":
	// ..., "onTimeout": ..., "retries": ...}}); they override Timeout and
	// OnTimeout. nil: not set.
	Commands map[string]CommandSettings
	// Concurrency bounds the calls at once per command ("concurrency");
	// 0: not set (the pool size).
	Concurrency int
	// Pool is the plugin's instance count ("pool", wasm.PluginConfig.PoolSize);
	// 0: not set.
	Pool int
	// MemoryPages is each instance's memory limit in 64 KiB pages
	// ("memoryPages", wasm.PluginConfig.MemoryPages); 0: not set.
	MemoryPages uint32
	// MaxResponseBytes bounds each encoded response of the plugin
	// ("maxResponseBytes", wasm.PluginConfig.MaxResponseBytes); 0: not set
	// (serve --max-response-bytes).
	MaxResponseBytes int
	// TableEntries bounds the entries of all of each instance's tables
	// together ("tableEntries", wasm.PluginConfig.TableEntries); 0: not
	// set.
	TableEntries uint32
	// IdleTimeout ("idleTimeout", wasm.PluginConfig.IdleTimeout); nil: not
	// set. 0 never releases the instances (wasm.NoTimeout).
	IdleTimeout *time.Duration
	// Env are environment variables granted to the guest ("grants.env"),
	// added to the host's (the file's value wins); nil: not set.
	Env map[string]string
	// Mounts are the directories granted to the guest ("grants.mounts");
	// they replace the host's when set (an empty list grants none). nil:
	// not set.
	Mounts []wasm.Mount
	// Config are values the guest reads with config_get ("config"), added to
	// the host's (the file's value wins); nil: not set.
	Config map[string]string
	// Secrets are values the guest reads with config_get too, each read
	// from a file the operator names ("secrets", operator_secrets.go);
	// a name is in Config or here, never both. nil: not set.
	Secrets map[string]Secret
	// Allow is who may call the plugin's commands ("allow", callers.go);
	// a "commands" entry's replaces it. nil: not set, anyone may.
	Allow *Callers
	// Quota bounds each caller's calls to the plugin's commands, all
	// together ("quota", callers.go); a "commands" entry's counts that
	// command's calls alone instead. Zero: not set.
	Quota Quota
	// Digest pins the module ("digest": "sha256:…", lower-case hex): a
	// module file of another digest is refused at load and reload. "":
	// not pinned.
	Digest string
	// Fuel is the budget of work units of each call of the plugin
	// ("fuel", wasm.PluginConfig.Fuel); a call that uses it up is answered
	// 500. 0: not set (no budget).
	Fuel int64
	// State is what the plugin may do with the state store ("state",
	// operator_state.go); nil: not set (its own namespace, at the host's
	// bounds, no shared one).
	State *wasm.StateGrant
	// Publish is where and how much the plugin may publish ("publish",
	// operator_publish.go); nil: not set (nowhere).
	Publish *wasm.PublishGrant
	// HTTP is what the plugin may reach over HTTP ("http",
	// operator_http.go); nil: not set (nothing).
	HTTP *httpout.Grant
	// Triggers are the module's triggers the host subscribes, with their
	// settings ("triggers", operator_triggers.go); nil: not set (none).
	Triggers map[string]TriggerSettings
}

// MaxFuel is the largest fuel budget an operator file may set: 2^53 units,
// the largest whole number JSON carries exactly (days of work).
const MaxFuel = 1 << 53

// operatorFields are the fields of an operator file, in documentation
// order.
var operatorFields = []string{"enabled", "timeout", "onTimeout", "retries", "commands", "concurrency", "pool", "memoryPages", "tableEntries", "maxResponseBytes", "idleTimeout", "grants", "config", "secrets", "allow", "quota", "digest", "fuel", "state", "publish", "http", "triggers"}

// OperatorError is a problem of an operator file: its message names the
// file, the field and what to write instead.
type OperatorError struct {
	File    string // the file's base name, e.g. echo.json
	Field   string // the field's path, e.g. "timeout" or "grants.mounts[0].host"; "" for the whole file
	Problem string // what is wrong and how to fix it
}

func (e *OperatorError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Problem
	}
	return fmt.Sprintf("%s: %q: %s", e.File, e.Field, e.Problem)
}

// ReadOperator reads and validates the operator file at path. It returns
// nil, nil when there is none.
func ReadOperator(path string) (*Operator, error) {
	data, err := readOperatorFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return ParseOperator(path, data)
}

// ParseOperator validates the content of the operator file at path. It
// refuses what it does not know: unknown or misspelt fields (names are
// case-sensitive), a field given twice, null, comments, values of the
// wrong type or out of range, and mounts whose host directory does not
// exist. A command named in "commands" is checked against the module's
// declared commands once the module is loaded (CheckCommands).
func ParseOperator(path string, data []byte) (*Operator, error) {
	p := &opParser{file: filepath.Base(path)}
	op := &Operator{File: path, Enabled: true}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, p.errf("", `is empty: write a JSON object, e.g. {"enabled": true}`)
	}
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, p.syntax(data, err)
	}
	fields, err := p.object(whole, "", operatorFields)
	if err != nil {
		return nil, err
	}
	if op.OnTimeout, err = p.onTimeout(fields, ""); err != nil {
		return nil, err
	}
	for _, f := range fields {
		switch f.key {
		case "enabled":
			err = p.boolean(f.raw, f.key, &op.Enabled)
		case "timeout":
			op.Timeout, err = p.duration(f.raw, f.key, false)
		case "commands":
			op.Commands, err = p.commands(f.raw, f.key)
		case "concurrency":
			op.Concurrency, err = p.integer(f.raw, f.key, 1, math.MaxInt32)
		case "pool":
			op.Pool, err = p.integer(f.raw, f.key, 1, math.MaxInt32)
		case "memoryPages":
			var n int
			n, err = p.integer(f.raw, f.key, 1, MaxMemoryPages)
			op.MemoryPages = uint32(n)
		case "tableEntries":
			var n int
			n, err = p.integer(f.raw, f.key, 1, MaxTableEntries)
			op.TableEntries = uint32(n)
		case "maxResponseBytes":
			op.MaxResponseBytes, err = p.size(f.raw, f.key, 1, wasm.MaxResponseBytesLimit)
		case "idleTimeout":
			var d time.Duration
			if d, err = p.duration(f.raw, f.key, true); err == nil {
				op.IdleTimeout = &d
			}
		case "grants":
			err = p.grants(f.raw, f.key, op)
		case "config":
			op.Config, err = p.strMap(f.raw, f.key, nil)
		case "secrets":
			op.Secrets, err = p.secrets(f.raw, f.key)
		case "allow":
			op.Allow, err = p.callers(f.raw, f.key)
		case "quota":
			op.Quota, err = p.quota(f.raw, f.key)
		case "digest":
			op.Digest, err = p.digest(f.raw, f.key)
		case "fuel":
			var n int
			n, err = p.integer(f.raw, f.key, 1, MaxFuel)
			op.Fuel = int64(n)
		case "state":
			op.State, err = p.state(f.raw, f.key)
		case "publish":
			op.Publish, err = p.publish(f.raw, f.key)
		case "http":
			op.HTTP, err = p.http(f.raw, f.key)
		case "triggers":
			op.Triggers, err = p.triggers(f.raw, f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := p.checkSecretNames(op); err != nil {
		return nil, err
	}
	return op, nil
}

// CheckCommands verifies the file against the module's description: every
// command named in the file's "commands" is one the module declares, and
// an on_timeout retry policy applies only to commands the module declares
// idempotent (a retry would run a command's effects twice).
func (op *Operator) CheckCommands(desc *abi.Description) error {
	if op == nil {
		return nil
	}
	var declared []string
	for _, c := range desc.Commands {
		declared = append(declared, c.Name)
	}
	names := make([]string, 0, len(op.Commands))
	for name := range op.Commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(declared, name) {
			return &OperatorError{File: filepath.Base(op.File), Field: "commands." + name,
				Problem: fmt.Sprintf("the module declares no command %q (it declares %s): fix the name or remove the entry",
					name, strings.Join(declared, ", "))}
		}
	}
	if err := op.checkTriggers(desc); err != nil {
		return err
	}
	return op.checkOnTimeout(desc)
}

// pluginConfig returns base with the file's settings applied. base's maps
// are not modified.
func (op *Operator) pluginConfig(base wasm.PluginConfig) wasm.PluginConfig {
	cfg := base
	if op == nil {
		return cfg
	}
	if op.Pool > 0 {
		cfg.PoolSize = op.Pool
	}
	if op.MemoryPages > 0 {
		cfg.MemoryPages = op.MemoryPages
	}
	if op.TableEntries > 0 {
		cfg.TableEntries = op.TableEntries
	}
	if op.MaxResponseBytes > 0 {
		cfg.MaxResponseBytes = op.MaxResponseBytes
	}
	if op.IdleTimeout != nil {
		cfg.IdleTimeout = setting.ZeroIsOff(*op.IdleTimeout) // the file's 0 is never
	}
	if op.Env != nil {
		cfg.Grants.Env = merged(base.Grants.Env, op.Env)
	}
	if op.Mounts != nil {
		cfg.Grants.Mounts = append([]wasm.Mount(nil), op.Mounts...)
	}
	if values := op.configWithSecrets(); values != nil {
		cfg.Config = merged(base.Config, values)
	}
	if op.Fuel > 0 {
		cfg.Fuel = op.Fuel
	}
	if op.State != nil {
		cfg.Grants.State = *op.State
	}
	if op.Publish != nil {
		cfg.Grants.Publish = *op.Publish
	}
	if op.HTTP != nil {
		cfg.Grants.HTTP = *op.HTTP
	}
	for name, c := range op.Commands {
		if c.Fuel == nil {
			continue
		}
		if cfg.CommandFuel == nil {
			cfg.CommandFuel = map[string]int64{}
		}
		cfg.CommandFuel[name] = setting.ZeroIsOff(*c.Fuel) // the file's 0: no budget for the command
	}
	return cfg
}

// concurrency returns the calls at once the file allows per command: its
// "concurrency", else its "pool"; 0 when it sets neither.
func (op *Operator) concurrency() int {
	switch {
	case op == nil:
		return 0
	case op.Concurrency > 0:
		return op.Concurrency
	}
	return op.Pool
}

func merged(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// opParser validates the parts of one operator file.
type opParser struct{ file string }

func (p *opParser) errf(field, format string, args ...any) error {
	return &OperatorError{File: p.file, Field: field, Problem: fmt.Sprintf(format, args...)}
}

type field struct {
	key string
	raw json.RawMessage
}

// syntax explains a JSON syntax error with its line and column.
func (p *opParser) syntax(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return p.errf("", "not valid JSON: %v", err)
	}
	off := int(se.Offset) - 1 // the offending byte: Offset counts the bytes read
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	msg := strings.TrimPrefix(se.Error(), "json: ")
	return p.errf("", "line %d, column %d: not valid JSON (%s); JSON allows no comments and no comma after the last item", line, col, msg)
}

// object reads raw as a JSON object whose keys must be among allowed (any
// key when allowed is nil), each once.
func (p *opParser) object(raw json.RawMessage, at string, allowed []string) ([]field, error) {
	if kind(raw) != "an object" {
		if at == "" {
			return nil, p.errf("", "the file holds %s: write a JSON object, e.g. {\"enabled\": true}", kind(raw))
		}
		return nil, p.errf(at, "is %s: write an object {...}", kind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, p.errf(at, "not valid JSON: %v", err)
	}
	var out []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, p.errf(at, "not valid JSON: %v", err)
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.errf(at, "not valid JSON: %v", err)
		}
		where := join(at, key)
		if seen[key] {
			return nil, p.errf(where, "is given twice: keep one")
		}
		seen[key] = true
		if allowed != nil && !slices.Contains(allowed, key) {
			return nil, p.unknown(where, key, allowed)
		}
		if kind(v) == "null" {
			return nil, p.errf(where, "is null: give a value, or remove the field to keep the default")
		}
		out = append(out, field{key: key, raw: v})
	}
	return out, nil
}

func (p *opParser) unknown(where, key string, allowed []string) error {
	for _, a := range allowed {
		if strings.EqualFold(a, key) {
			return p.errf(where, "unknown field: did you mean %q? (names are case-sensitive)", a)
		}
	}
	return p.errf(where, "unknown field: the fields here are %s", quoteAll(allowed))
}

func (p *opParser) boolean(raw json.RawMessage, at string, dst *bool) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return p.errf(at, "is %s: write true or false", kind(raw))
	}
	return nil
}

func (p *opParser) str(raw json.RawMessage, at string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", p.errf(at, "is %s: write a string \"...\"", kind(raw))
	}
	return s, nil
}

// digest reads a module digest pin: "sha256:" and 64 lower-case hex
// digits.
func (p *opParser) digest(raw json.RawMessage, at string) (string, error) {
	s, err := p.str(raw, at)
	if err != nil {
		return "", err
	}
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if b, err := hex.DecodeString(hexPart); !ok || err != nil || len(b) != 32 || hex.EncodeToString(b) != hexPart {
		return "", p.errf(at, `must be a module's sha256, e.g. "sha256:%s" (cmdhost plugin inspect shows it)`, strings.Repeat("0", 64))
	}
	return s, nil
}

// duration reads a Go duration string; zero is allowed only when
// zeroOK, negative never.
func (p *opParser) duration(raw json.RawMessage, at string, zeroOK bool) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		hint := ""
		if kind(raw) == "a number" {
			hint = fmt.Sprintf(" with a unit, e.g. \"%ss\"", strings.TrimSpace(string(raw)))
		}
		return 0, p.errf(at, "is %s: write a duration string%s (e.g. \"2s\", \"500ms\", \"5m\")", kind(raw), hint)
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, p.errf(at, "%q is not a duration (e.g. \"2s\")", s)
	case d < 0:
		return 0, p.errf(at, "%q is negative: give a positive duration (e.g. \"2s\")", s)
	case d == 0 && !zeroOK:
		return 0, p.errf(at, "%q is zero: give a positive duration (e.g. \"2s\"), or remove the field to keep the default", s)
	}
	return d, nil
}

func (p *opParser) integer(raw json.RawMessage, at string, lo, hi int) (int, error) {
	if kind(raw) != "a number" {
		return 0, p.errf(at, "is %s: write a whole number from %d to %d", kind(raw), lo, hi)
	}
	text := strings.TrimSpace(string(raw))
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, p.errf(at, "%s is not a whole number: write one from %d to %d", text, lo, hi)
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, p.errf(at, "%d is out of range: write a whole number from %d to %d", n, lo, hi)
	}
	return int(n), nil
}

// size reads a size in bytes from lo to hi: a whole number of bytes, or a
// string with a unit ("1MiB", "64KiB", bytesize.Parse), as serve's flags
// take sizes.
func (p *opParser) size(raw json.RawMessage, at string, lo, hi int) (int, error) {
	if kind(raw) == "a number" {
		return p.integer(raw, at, lo, hi)
	}
	var text string
	if kind(raw) != "a string" || json.Unmarshal(raw, &text) != nil {
		return 0, p.errf(at, "is %s: write a size from %s to %s: bytes (1048576) or a string with a unit (\"1MiB\")", kind(raw), bytesize.Format(int64(lo)), bytesize.Format(int64(hi)))
	}
	n, err := bytesize.Parse(text)
	if err != nil {
		return 0, p.errf(at, "%q: %v", text, err)
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, p.errf(at, "%q is out of range: write a size from %s to %s", text, bytesize.Format(int64(lo)), bytesize.Format(int64(hi)))
	}
	return int(n), nil
}

// strMap reads an object of string values; check, when not nil, vets each
// key.
func (p *opParser) strMap(raw json.RawMessage, at string, check func(where, key string) error) (map[string]string, error) {
	fields, err := p.object(raw, at, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		where := join(at, f.key)
		if check != nil {
			if err := check(where, f.key); err != nil {
				return nil, err
			}
		}
		if out[f.key], err = p.str(f.raw, where); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// commandFields are the fields of a "commands" entry.
var commandFields = []string{"timeout", "onTimeout", "retries", "allow", "quota", "fuel"}

func (p *opParser) commands(raw json.RawMessage, at string) (map[string]CommandSettings, error) {
	fields, err := p.object(raw, at, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]CommandSettings, len(fields))
	for _, f := range fields {
		where := join(at, f.key)
		settings, err := p.object(f.raw, where, commandFields)
		if err != nil {
			return nil, err
		}
		var cs CommandSettings
		if cs.OnTimeout, err = p.onTimeout(settings, where); err != nil {
			return nil, err
		}
		for _, s := range settings {
			switch s.key {
			case "timeout":
				cs.Timeout, err = p.duration(s.raw, join(where, s.key), false)
			case "allow":
				cs.Allow, err = p.callers(s.raw, join(where, s.key))
			case "quota":
				cs.Quota, err = p.quota(s.raw, join(where, s.key))
			case "fuel":
				var n int
				if n, err = p.integer(s.raw, join(where, s.key), 0, MaxFuel); err == nil {
					f := int64(n)
					cs.Fuel = &f
				}
			}
			if err != nil {
				return nil, err
			}
		}
		out[f.key] = cs
	}
	return out, nil
}

// onTimeout reads the on_timeout policy among the fields of the object at
// at: "onTimeout" ("fail" or "retry") and "retries" (how many, with
// "retry" only). It returns nil when neither is set.
func (p *opParser) onTimeout(fields []field, at string) (*OnTimeout, error) {
	var policy, retries *field
	for i := range fields {
		switch fields[i].key {
		case "onTimeout":
			policy = &fields[i]
		case "retries":
			retries = &fields[i]
		}
	}
	if policy == nil && retries == nil {
		return nil, nil
	}
	name := events.PolicyFail
	if policy != nil {
		where := join(at, policy.key)
		s, err := p.str(policy.raw, where)
		if err != nil {
			return nil, p.errf(where, "is %s: write %q or %q", kind(policy.raw), events.PolicyFail, events.PolicyRetry)
		}
		switch {
		case s == string(events.PolicyFail) || s == string(events.PolicyRetry):
			name = events.Policy(s)
		case strings.EqualFold(s, string(events.PolicyFail)) || strings.EqualFold(s, string(events.PolicyRetry)):
			return nil, p.errf(where, "%q: did you mean %q? (policies are lowercase)", s, strings.ToLower(s))
		default:
			return nil, p.errf(where, "%q is not an on_timeout policy: write %q (the default: answer 408) or %q (run the call again; needs \"retries\")", s, events.PolicyFail, events.PolicyRetry)
		}
	}
	out := &OnTimeout{}
	switch {
	case retries != nil && name != events.PolicyRetry:
		if policy == nil {
			return nil, p.errf(join(at, retries.key), `is set without "onTimeout": "retry": add "onTimeout": "retry", or remove "retries"`)
		}
		return nil, p.errf(join(at, retries.key), `is set, but "onTimeout" is "fail", which never retries: write "onTimeout": "retry", or remove "retries"`)
	case retries != nil:
		n, err := p.integer(retries.raw, join(at, retries.key), 1, MaxTimeoutRetries)
		if err != nil {
			return nil, err
		}
		out.Retries = n
	case name == events.PolicyRetry:
		return nil, p.errf(join(at, policy.key), `"retry" needs "retries", how many more times a timed-out call may run (1 to %d): add e.g. "retries": 2`, MaxTimeoutRetries)
	}
	return out, nil
}

func (p *opParser) grants(raw json.RawMessage, at string, op *Operator) error {
	fields, err := p.object(raw, at, []string{"env", "mounts"})
	if err != nil {
		return err
	}
	for _, f := range fields {
		where := join(at, f.key)
		switch f.key {
		case "env":
			op.Env, err = p.strMap(f.raw, where, func(where, key string) error {
				if key == "" || strings.ContainsAny(key, "=\x00") {
					return p.errf(where, "is not an environment variable name: no empty name, no '='")
				}
				return nil
			})
		case "mounts":
			op.Mounts, err = p.mounts(f.raw, where)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *opParser) mounts(raw json.RawMessage, at string) ([]wasm.Mount, error) {
	var items []json.RawMessage
	if kind(raw) != "a list" || json.Unmarshal(raw, &items) != nil {
		return nil, p.errf(at, `is %s: write a list, e.g. [{"host": "/srv/data", "guest": "/data", "readOnly": true}]`, kind(raw))
	}
	out := make([]wasm.Mount, 0, len(items))
	guests := map[string]int{}
	for i, item := range items {
		where := fmt.Sprintf("%s[%d]", at, i)
		fields, err := p.object(item, where, []string{"host", "guest", "readOnly"})
		if err != nil {
			return nil, err
		}
		var m wasm.Mount
		var hasHost, hasGuest bool
		for _, f := range fields {
			fw := join(where, f.key)
			switch f.key {
			case "host":
				hasHost = true
				m.HostDir, err = p.str(f.raw, fw)
				if err == nil {
					err = p.hostDir(fw, m.HostDir)
				}
			case "guest":
				hasGuest = true
				m.GuestDir, err = p.str(f.raw, fw)
				if err == nil && (!strings.HasPrefix(m.GuestDir, "/") || path.Clean(m.GuestDir) != m.GuestDir) {
					err = p.errf(fw, "%q is not a clean absolute path inside the guest: write one such as \"/data\"", m.GuestDir)
				}
			case "readOnly":
				err = p.boolean(f.raw, fw, &m.ReadOnly)
			}
			if err != nil {
				return nil, err
			}
		}
		if !hasHost || !hasGuest {
			return nil, p.errf(where, `needs "host" (a directory on the host) and "guest" (where the guest sees it), e.g. {"host": "/srv/data", "guest": "/data"}`)
		}
		if j, dup := guests[m.GuestDir]; dup {
			return nil, p.errf(join(where, "guest"), "%q is already mounted by %s[%d]: give each mount its own guest path", m.GuestDir, at, j)
		}
		guests[m.GuestDir] = i
		out = append(out, m)
	}
	return out, nil
}

func (p *opParser) hostDir(at, dir string) error {
	if !filepath.IsAbs(dir) {
		return p.errf(at, "%q is not an absolute path: write the directory's full path, e.g. \"/srv/data\"", dir)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p.errf(at, "%q does not exist: create the directory or fix the path", dir)
	case err != nil:
		return p.errf(at, "%q: %v", dir, err)
	case !st.IsDir():
		return p.errf(at, "%q is not a directory: mount a directory", dir)
	}
	return nil
}

// kind names the JSON type of a valid value.
func kind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "empty"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
