//go:build !unix && !windows

package safeio

const (
	ONonBlock  = 0
	ONoFollow  = 0
	ODirectory = 0
)
