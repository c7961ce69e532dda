package runs

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// indexEntry is one path of an index written by writeIndex.
type indexEntry struct {
	path, mode, blob string
}

// writeIndex writes a git index (version 2) holding entries, at stage 0
// with no stat facts, to path: what git update-index --index-info would
// write into an empty index, without a git process. Only checkout-index
// reads it (every entry is written out, -f: the missing stat facts do not
// matter). The object format follows the ids' length (40 hex digits:
// SHA-1, 64: SHA-256).
func writeIndex(path string, entries []indexEntry) error {
	es := append([]indexEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].path < es[j].path })
	var h hash.Hash
	var idLen int
	buf := []byte("DIRC")
	buf = binary.BigEndian.AppendUint32(buf, 2)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(es)))
	for i, e := range es {
		id, err := hex.DecodeString(e.blob)
		if err != nil || (len(id) != sha1.Size && len(id) != sha256.Size) || (idLen != 0 && len(id) != idLen) {
			return fmt.Errorf("an index entry for %q: bad object id %q", e.path, e.blob)
		}
		if idLen == 0 {
			idLen = len(id)
		}
		mode, err := strconv.ParseUint(e.mode, 8, 32)
		if err != nil || (mode != 0o100644 && mode != 0o100755) {
			return fmt.Errorf("an index entry for %q: mode %q is not a regular file's", e.path, e.mode)
		}
		if !indexPath(e.path) || (i > 0 && es[i-1].path == e.path) {
			return fmt.Errorf("an index entry for %q: not a path git writes, or repeated", e.path)
		}
		start := len(buf)
		buf = append(buf, make([]byte, 24)...) // ctime, mtime, dev, ino: none
		buf = binary.BigEndian.AppendUint32(buf, uint32(mode))
		buf = append(buf, make([]byte, 12)...) // uid, gid, size: none
		buf = append(buf, id...)
		buf = binary.BigEndian.AppendUint16(buf, uint16(min(len(e.path), 0xfff)))
		buf = append(buf, e.path...)
		// NUL padding to a multiple of 8 bytes, at least one.
		n := len(buf) - start
		buf = append(buf, make([]byte, (n+8)&^7-n)...)
	}
	if idLen == sha256.Size {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write(buf)
	buf = h.Sum(buf)
	return os.WriteFile(path, buf, 0o600)
}

// indexPath reports whether p is a path git would take into an index
// (update-index's checks, in short): relative, slash-separated, no empty,
// "." or ".." part, no part that is ".git" in any case (nor, as NTFS reads
// names, ".git" with trailing dots or spaces, or "git~1"), no NUL, and no
// backslash on Windows.
func indexPath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || (runtime.GOOS == "windows" && strings.ContainsRune(p, '\\')) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		low := strings.ToLower(part)
		if part == "" || part == "." || part == ".." || strings.TrimRight(low, ". ") == ".git" || low == "git~1" {
			return false
		}
	}
	return true
}
