module github.com/relay-baton/relay-baton

go 1.26

require (
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/fatih/color v1.19.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/mattn/go-isatty v0.0.24
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.42.0
)

require github.com/mattn/go-colorable v0.1.14 // indirect
