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
// little (a file server's). A file changed within it is read again.
var settled = 2 * time.Second

// settledFine is settled on a local file system that keeps times to the
// nanosecond, stamped by this machine's clock (fineFS): a change made
// after a look gets a later change time once the kernel's clock has
// ticked (every 1 to 10 ms). Its times are fine when the file's change
// or modification time has a fraction of a second (where the file
// system keeps whole seconds, as ext4 with small inodes, they have
// none, and settled holds).
var settledFine = 100 * time.Millisecond

// statAt is fi's stat when the file's last change was settled before
// the look at time at (ok false otherwise: the file is read again).
// fine is the device whose times are fine (fineFS), or none.
func statAt(fi os.FileInfo, at time.Time, fine fineDev) fileStat {
	st := sysStat(fi)
	window := settled
	if fine.ok && st.dev == fine.dev && (st.ctime%1e9 != 0 || st.mtime%1e9 != 0) {
		window = min(window, settledFine)
	}
	if !st.ok || st.ctime >= at.Add(-window).UnixNano() || st.mtime >= at.Add(-window).UnixNano() {
		return fileStat{}
	}
	return st
}

// fineDev is a device whose file system keeps fine times (fineFS).
type fineDev struct {
	dev uint64
	ok  bool
}

// fine is the user's tree's device when its times are fine (asked once).
func (r *Run) fine() fineDev {
	r.fineOnce.Do(func() { r.fineRoot = fineFS(r.Root) })
	return r.fineRoot
}
