package runs

import (
	"os"
	"time"
)

// fileStat is what a look at a file records of it to know, later,
// without reading it, that it has not changed since: the fields a write,
// a rename over it or a chmod changes (the change time among them, which
// no program sets back). ok is false where the system gives no change
// time (the file is then read again).
type fileStat struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	mode         os.FileMode
	ok           bool
}

// settled is how long before a look a file's last change must be for
// its stat to stand for its content: a change made later gives another
// change time even where the file system keeps times to the second or
// two (FAT's), or where the clock that stamps them lags this one a
// little. A file changed within it is read again.
var settled = 2 * time.Second

// statAt is fi's stat when the file's last change was settled before
// the look at time at (ok false otherwise: the file is read again).
func statAt(fi os.FileInfo, at time.Time) fileStat {
	st := sysStat(fi)
	if !st.ok || st.ctime >= at.Add(-settled).UnixNano() || st.mtime >= at.Add(-settled).UnixNano() {
		return fileStat{}
	}
	return st
}
