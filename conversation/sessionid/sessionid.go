// Package sessionid is what a session id looks like: Claude Code's session
// ids and Codex's thread ids are UUIDs, and nothing else may become a path
// component of a chat folder, a lock or a rollout.
package sessionid

// IsUUID reports whether id has the 8-4-4-4-12 hex shape. (Hand-written:
// a package-level regexp would cost the Stop hook 0.2 ms at every start.)
func IsUUID(id string) bool { return len(id) == 36 && Shaped(id) }

// Shaped reports whether id (at most 36 bytes) has a UUID's shape as
// far as it goes: hex digits, and dashes where a UUID has them.
func Shaped(id string) bool {
	if len(id) > 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
