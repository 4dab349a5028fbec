package testkit

import "testing"

// What a test may need beyond Go, for Needs: `make unit` (go test -short)
// runs on a machine that has none of them, `make test` (after .ci/deps and
// make plugins) on one that has them all.
const (
	// Plugins are the test plugins, build outputs of `make plugins`
	// (testdata/plugins*/, gitignored).
	Plugins = "the test plugins (make plugins)"
	// Mosquitto is the system's MQTT broker (.ci/deps).
	Mosquitto = "mosquitto (.ci/deps)"
	// RedisServer is redis-server (.ci/deps).
	RedisServer = "redis-server (.ci/deps)"
	// Toolchains are the guest toolchains `make plugins` and `cmdhost
	// dev` build with: wabt, rustc, clang with wasi-libc, npm.
	Toolchains = "the guest toolchains (wabt, rustc, clang, npm: .ci/deps)"
	// Binary is the cmdhost binary the CLI's tests build and run as a
	// separate process, with the test plugins and a broker.
	Binary = "the cmdhost binary run as a process, with the test plugins and a broker"
)

// Needs skips the test under go test -short, saying what it needs (one of
// the constants above): -short is `make unit`, the tests that need
// nothing installed and run in seconds. The helpers that start a broker or
// Redis or read a test plugin call it, so a test that uses them skips in
// short mode whether or not the machine has what it needs; a test that
// reaches for something else outside Go calls it itself.
func Needs(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("skipped under -short (make unit): needs %s", what)
	}
}
