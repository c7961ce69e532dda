package room

import "strings"

// Complete completes a partial input line: command names after "/", then
// the command's arguments. It returns suffixes and the typed length.
func Complete(e *Engine, text string) ([][]rune, int) {
	if !strings.HasPrefix(text, "/") {
		return nil, 0
	}
	name, rest, hasArgs := strings.Cut(text[1:], " ")
	if !hasArgs {
		var out [][]rune
		lname := strings.ToLower(name)
		for _, cmd := range Commands {
			if strings.HasPrefix(cmd.Name, lname) {
				out = append(out, []rune(cmd.Name[len(lname):]+" "))
			}
		}
		return out, len([]rune(name))
	}
	cmd := Lookup(name)
	if cmd == nil || cmd.Args == nil {
		return nil, 0
	}
	fields := strings.Fields(rest)
	cur := ""
	if len(fields) > 0 && !strings.HasSuffix(rest, " ") {
		cur, fields = fields[len(fields)-1], fields[:len(fields)-1]
	}
	var out [][]rune
	for _, w := range cmd.Args(e, fields) {
		if strings.HasPrefix(w, cur) {
			out = append(out, []rune(w[len(cur):]+" "))
		}
	}
	return out, len([]rune(cur))
}
