//go:build !unix && !windows

package events

import "os"

func lockFile(*os.File) (unlock func()) { return func() {} }

const (
	openNonBlock  = 0
	openNoFollow  = 0
	openDirectory = 0
)
