package main

import "fmt"

// notYet is the run function of a command whose issue has not landed: it
// answers --help and otherwise says plainly that the command is missing.
func notYet(inv *invocation) error {
	fs := inv.flags()
	fs.ParseErrorsAllowlist.UnknownFlags = true
	if err := inv.parse(fs); err != nil {
		return err
	}
	return fmt.Errorf("%s is not built yet in this version of relay-baton", inv.Cmd.Name)
}
