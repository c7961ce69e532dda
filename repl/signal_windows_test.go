package repl

// interruptSelf: Windows has no SIGINT to send oneself.
func interruptSelf() {}
