// Package testkit holds the helpers the tests of several packages share:
// a named pipe where a file should be (MakeFIFO), git in a scratch
// repository (Git), a wait on a condition with a hang guard (Eventually),
// and a CLI stand-in that hangs (HangingExe) with a run cancelled once it
// has started (Cancelled). It is for tests only: no non-test code imports it
// (TestOnlyTestsImportTestkit).
package testkit
