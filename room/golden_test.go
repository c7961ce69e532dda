package room

import "flag"

// -update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func updateGolden() bool { return *update }
