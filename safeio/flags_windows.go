package safeio

// Windows has no O_NONBLOCK, O_NOFOLLOW nor O_DIRECTORY for open:
// OpenChecked checks the path after opening instead, and a file created
// with O_EXCL is never a link's target.
const (
	ONonBlock  = 0
	ONoFollow  = 0
	ODirectory = 0
)
