//go:build !unix

package workspace

// noFollow: there is no O_NOFOLLOW off Unix. EnsureIgnored creates its
// file with O_EXCL, which fails on a symlink in its place, and reads an
// existing one with events.ReadOwned, which refuses a symlink.
const noFollow = 0
