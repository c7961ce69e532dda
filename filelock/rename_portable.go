//go:build unix && (portable || !(linux || darwin))

package filelock

// RenameNoReplace is renameLink: the Unix way that needs no system-specific
// call (the BSDs, and Linux and macOS built with -tags portable).
func RenameNoReplace(oldpath, newpath string) error { return renameLink(oldpath, newpath) }
