package repl

import "github.com/relay-baton/relay-baton/room"

// completer implements readline.AutoCompleter from the command table.
type completer struct{ e *room.Engine }

// Do returns the suffixes that complete the word before pos, and the
// length of what is already typed of it.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	return room.Complete(c.e, string(line[:pos]))
}
