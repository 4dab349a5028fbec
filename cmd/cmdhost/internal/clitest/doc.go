// Package clitest is the command line's test support: Main builds the
// cmdhost binary once per package of tests, Run runs it, StartServe starts
// a host on a free port, and the helpers several packages' tests share.
// Only tests import it.
package clitest
