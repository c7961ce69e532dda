//go:build unix

package workspace

import "syscall"

// noFollow makes open(2) refuse a symlink in the file's place.
const noFollow = syscall.O_NOFOLLOW
