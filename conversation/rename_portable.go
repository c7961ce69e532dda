//go:build unix && (portable || !(linux || darwin))

package conversation

// renameNoReplace is renameLink: the Unix way that needs no system-specific
// call (the BSDs, and Linux and macOS built with -tags portable).
func renameNoReplace(oldpath, newpath string) error { return renameLink(oldpath, newpath) }
