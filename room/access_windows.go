package room

import (
	"errors"
	"os"
)

// canWrite reports a folder whose read-only attribute is set; Windows has
// no access(2), and its ACLs are only known by writing.
func canWrite(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return errors.New("read-only")
	}
	return nil
}
