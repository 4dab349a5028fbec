package base

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"serve", "invoke", "call", "plugin", "list", "exec-timeout", "new", "dev"}
	for word, want := range map[string]string{
		"invok": "invoke", "plugins": "plugin", "lst": "list", "exec_timeout": "exec-timeout",
		"EXEC-TIMEOUT": "exec-timeout", "exec-timout": "exec-timeout", "xyzzy": "", "ne": "new", "zzz": "", "dve": "dev", "lsit": "list", "sreve": "serve",
	} {
		if got := Closest(word, names); got != want {
			t.Errorf("closest(%q) = %q; want %q", word, got, want)
		}
	}
}
