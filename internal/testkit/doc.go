// Package testkit holds the helpers the tests of several packages share:
// a named pipe where a file should be (MakeFIFO), git in a scratch
// repository (Git), and a wait on a condition with a hang guard
// (Eventually). It is for tests only: no non-test code imports it
// (TestOnlyTestsImportTestkit).
package testkit
