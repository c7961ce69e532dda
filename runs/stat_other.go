//go:build !linux && !darwin

package runs

import "os"

// sysStat: no change time is read here (Windows keeps none a program
// cannot set): every file is read again.
func sysStat(os.FileInfo) fileStat { return fileStat{} }
