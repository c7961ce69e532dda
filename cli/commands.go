package cli

// The commands that are cli's own, beside every table's: version,
// completion and help. relay-baton's other commands are rows of their own
// packages (cmd/...), listed in main's table.

var Version = &Command{
	Entry: Entry{Name: "version", Usage: "[--json]", Short: "Print the version and the commit it was built from"},
	Long: `Prints the module version and, for a binary built from a git checkout (go install . or
go build in the clone), the commit, its time and whether the work tree had local changes,
from the build information Go records. --version prints the same line.`,
	Run: runVersion,
}

var Completion = &Command{
	Entry: Entry{Name: "completion", Usage: "bash|zsh|fish|powershell", Short: "Print a shell completion script"},
	Long: `Prints a completion script for bash, zsh, fish or PowerShell, generated from the same
command table that drives dispatch and --help: commands and aliases, each command's flags,
flag values (--color auto|always|never, --kind and --role of replay, --diet, --agent,
--to, --scope) and session ids for --session (from 'relay-baton targets'; for replay,
from the conversation log). The bash script needs no bash-completion package.

Install, with one of these lines (bash, zsh, fish, PowerShell's profile):

` + "\techo 'source <(relay-baton completion bash)' >> ~/.bashrc\n" +
		"\techo 'source <(relay-baton completion zsh)' >> ~/.zshrc\n" +
		"\trelay-baton completion fish > ~/.config/fish/completions/relay-baton.fish\n" +
		"\trelay-baton completion powershell >> $PROFILE\n" + `
or, for this shell only:

` + "\tsource <(relay-baton completion bash)",
	Subcommands: []string{"bash", "zsh", "fish", "powershell"},
	Run:         runCompletion,
}

var Help = &Command{
	Entry: Entry{Name: "help", Usage: "[command]", Short: "Show help for relay-baton or one command"},
	Run:   runHelp,
}
