//go:build !unix

package conversation

// openNonBlock: Windows has no O_NONBLOCK for open; files are checked
// after opening instead.
const openNonBlock = 0
