//go:build linux && !portable

package runs

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func sysStat(fi os.FileInfo) fileStat {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}
	}
	return fileStat{dev: uint64(s.Dev), ino: uint64(s.Ino), size: fi.Size(), mode: fi.Mode(),
		mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), ok: true}
}

// fineFS is the device of path when its file system keeps times to the
// nanosecond and stamps them with this machine's clock: ext2/3/4, XFS,
// Btrfs, tmpfs, F2FS, overlayfs (over one of those). Others (a network
// file system, whose server stamps the times; FAT; FUSE) are not.
func fineFS(path string) fineDev {
	var fs unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(path, &fs) != nil || unix.Stat(path, &st) != nil {
		return fineDev{}
	}
	switch int64(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return fineDev{dev: uint64(st.Dev), ok: true}
	}
	return fineDev{}
}
