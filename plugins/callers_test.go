package plugins

import (
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/abi"
)

// "allow" and "quota", per plugin and per command, resolve onto each
// command: a command's entry replaces the plugin's; a command's quota
// counts its calls alone, the plugin's all its commands' together.
func TestOperatorAllowAndQuota(t *testing.T) {
	op, err := ParseOperator("/p/shop.json", []byte(`{
		"allow": ["alice", "user:ops-*", "client:sensor-?"],
		"quota": "10/s",
		"commands": {"buy": {"allow": ["bob"], "quota": "2/m"}, "close": {"allow": []}}}`))
	if err != nil {
		t.Fatal(err)
	}
	buy := Resolve("shop", abi.Command{Name: "buy"}, op, Defaults{})
	list := Resolve("shop", abi.Command{Name: "list"}, op, Defaults{})
	closing := Resolve("shop", abi.Command{Name: "close"}, op, Defaults{})
	open := Resolve("shop", abi.Command{Name: "list"}, nil, Defaults{})
	if buy.Quota != (Quota{Limit: 2, Per: time.Minute}) || buy.QuotaKey != "shop/buy" || buy.Quota.String() != "2/m" {
		t.Errorf("buy: quota %v key %q", buy.Quota, buy.QuotaKey)
	}
	if list.Quota != (Quota{Limit: 10, Per: time.Second}) || list.QuotaKey != "shop" {
		t.Errorf("list: quota %v key %q", list.Quota, list.QuotaKey)
	}
	if open.Allow != nil || !open.Quota.IsZero() {
		t.Errorf("no operator file: allow %v quota %v; want anyone, none", open.Allow, open.Quota)
	}
	for _, c := range []struct {
		cmd    Command
		caller abi.Caller
		want   bool
	}{
		{list, abi.Caller{User: "alice", ClientID: "x"}, true},
		{list, abi.Caller{User: "ops-7"}, true},
		{list, abi.Caller{User: "ops"}, false},
		{list, abi.Caller{ClientID: "sensor-?"}, true}, // ? is no wildcard
		{list, abi.Caller{ClientID: "sensor-1"}, false},
		{list, abi.Caller{ClientID: "alice"}, false}, // a client id is no user name
		{list, abi.Caller{}, false},
		{buy, abi.Caller{User: "alice"}, false},
		{buy, abi.Caller{User: "bob"}, true},
		{closing, abi.Caller{User: "alice"}, false},
	} {
		if got := c.cmd.Allow.Allows(c.caller); got != c.want {
			t.Errorf("%s allows %v: %v, want %v (allow %s)", c.cmd.Name(), c.caller, got, c.want, c.cmd.Allow)
		}
	}
	star, err := ParseOperator("/p/x.json", []byte(`{"allow": ["*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !star.Allow.Allows(abi.Caller{ClientID: "c"}) || !star.Allow.Allows(abi.Caller{User: "u"}) || star.Allow.Allows(abi.Caller{}) {
		t.Error(`"*" must allow every verified caller and no unverified one`)
	}
}

func TestOperatorAllowAndQuotaRefused(t *testing.T) {
	for bad, want := range map[string]string{
		`{"allow": "alice"}`:                     `"allow": is a string: write a list of callers`,
		`{"allow": [""]}`:                        `"allow[0]": "" names no one`,
		`{"allow": ["client:"]}`:                 `"allow[0]": "client:" names no one`,
		`{"allow": [7]}`:                         `"allow[0]": is a number`,
		`{"allow": ["a\u0001b"]}`:                `holds a control character`,
		`{"quota": 5}`:                           `"quota": is a number: write a string "N/s"`,
		`{"quota": "5/h"}`:                       `"quota": "5/h" is not a quota`,
		`{"quota": "0/s"}`:                       `the count must be from 1 to 1000000`,
		`{"commands": {"x": {"quota": "many"}}}`: `"commands.x.quota": "many" is not a quota`,
		`{"commands": {"x": {"allow": ["ok"], "alow": []}}}`: `"commands.x.alow": unknown field`,
	} {
		_, err := ParseOperator("/p/echo.json", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", bad, err, want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"a*", "a", true}, {"a*", "abc", true}, {"*c", "abc", true}, {"a*c", "abbbc", true},
		{"a*c", "abcd", false}, {"*", "", true}, {"a", "ab", false}, {"a*b*c", "axbxxc", true},
		{"a*b*c", "axcxb", false}, {strings.Repeat("*a", 20) + "b", strings.Repeat("a", 100), false},
	} {
		if got := globMatch(c.p, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}
