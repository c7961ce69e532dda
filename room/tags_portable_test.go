//go:build portable

package room

// buildTags are the tags this test binary was built with, for the
// binaries the tests build.
const buildTags = "portable"
