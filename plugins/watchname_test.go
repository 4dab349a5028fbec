package plugins

import "testing"

// The watcher acts on a module, its operator file and its signature: a
// signature copied after its module (serve --trust) has the module
// loaded again.
func TestWatchedName(t *testing.T) {
	for file, want := range map[string]string{"a.wasm": "a", "a.json": "a", "a" + SignatureExt: "a", "a.txt": ""} {
		got, ok := watchedName(file)
		if got != want || ok != (want != "") {
			t.Errorf("watchedName(%q) = %q, %v; want %q", file, got, ok, want)
		}
	}
}
