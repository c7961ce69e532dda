//go:build race

package main

// raceEnabled: the race detector slows every process several times, so
// timing bounds of the tests that start relay-baton processes are widened.
const raceEnabled = true
