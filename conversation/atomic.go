package conversation

import (
	"io/fs"

	"github.com/relay-baton/relay-baton/events"
)

// WriteFileAtomic is relay-baton's one whole-file write,
// events.WriteFileAtomic: a temporary file beside path renamed over it
// (fsynced, file and folder, when durable).
func WriteFileAtomic(path string, data []byte, perm fs.FileMode, durable bool) error {
	return events.WriteFileAtomic(path, data, perm, durable)
}
