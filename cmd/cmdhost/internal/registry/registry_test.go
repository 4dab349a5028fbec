package registry

import "testing"

// A pulled module is named after its repository's last element, without
// the tag or digest: oci://reg/team/greet:1.2 installs as greet.
func TestRepositoryName(t *testing.T) {
	for ref, want := range map[string]string{
		"oci://localhost:5000/greet:1.2":          "greet",
		"oci://reg.example/team/greet":            "greet",
		"oci://reg.example/team/greet@sha256:abc": "greet",
		"localhost:5000/greet:latest":             "greet",
	} {
		if got := RepositoryName(ref); got != want {
			t.Errorf("RepositoryName(%q) = %q; want %q", ref, got, want)
		}
	}
}
