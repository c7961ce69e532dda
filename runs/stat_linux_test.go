//go:build linux && !portable

package runs

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// fakeInfo is a file's stat with chosen times.
type fakeInfo struct {
	os.FileInfo
	st syscall.Stat_t
}

func (f fakeInfo) Sys() any           { return &f.st }
func (f fakeInfo) Size() int64        { return f.st.Size }
func (f fakeInfo) Mode() os.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return time.Unix(f.st.Mtim.Unix()) }

// A file changed 500 ms before a look is trusted by its stat only on a
// file system whose times are fine (to the nanosecond, this machine's
// clock): one keeping whole seconds, or another device, waits out the
// 2 s.
func TestSettledWindowFollowsTheFileSystem(t *testing.T) {
	at := time.Now()
	changed := at.Add(-500 * time.Millisecond)
	whole := time.Unix(changed.Unix(), 0)
	info := func(c time.Time) fakeInfo {
		ts := syscall.NsecToTimespec(c.UnixNano())
		return fakeInfo{st: syscall.Stat_t{Dev: 7, Ino: 1, Size: 3, Mtim: ts, Ctim: ts}}
	}
	for _, tc := range []struct {
		name string
		fi   fakeInfo
		fine fineDev
		ok   bool
	}{
		{"fine times", info(changed.Add(123)), fineDev{dev: 7, ok: true}, true},
		{"whole seconds", info(whole), fineDev{dev: 7, ok: true}, false},
		{"another device", info(changed.Add(123)), fineDev{dev: 8, ok: true}, false},
		{"no fine file system", info(changed.Add(123)), fineDev{}, false},
	} {
		if got := statAt(tc.fi, at, tc.fine).ok; got != tc.ok {
			t.Errorf("%s: settled %v, want %v", tc.name, got, tc.ok)
		}
	}
	if !fineFS(t.TempDir()).ok {
		t.Logf("the test folder's file system is not counted as fine here")
	}
}
