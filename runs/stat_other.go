//go:build (!linux && !darwin) || portable

package runs

import "os"

// sysStat: no change time is read here (Windows keeps none a program
// cannot set; the portable build tests this path on Linux): every file
// is read again.
func sysStat(os.FileInfo) fileStat { return fileStat{} }

// fineFS: none here.
func fineFS(string) fineDev { return fineDev{} }
