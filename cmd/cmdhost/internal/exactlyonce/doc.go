// Package exactlyonce holds the tests of cmdhost serve with a store that
// run hosts through kills, restarts, failovers and bridges: a
// non-idempotent request runs once (a ledger counts), the handlers' state
// counts every request once, a full or unreachable store says so. They
// are servecmd's longest tests, in a package of their own so that go test
// runs them beside servecmd's others. The package has nothing but them.
package exactlyonce
