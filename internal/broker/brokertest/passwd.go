package brokertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The secured mosquitto's users: a password file made by mosquitto_passwd
// (the certificates a test needs come from testkit.PKI).

// WritePasswordFile writes a mosquitto password file of the users given
// (name → password) with mosquitto_passwd, and returns its path.
func WritePasswordFile(t testing.TB, users map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "passwd")
	for name, pw := range users {
		args := []string{"-b", path, name, pw}
		if _, err := os.Stat(path); err != nil {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command("mosquitto_passwd", args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v: %s", err, out)
		}
	}
	return path
}
