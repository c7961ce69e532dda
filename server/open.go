package server

// browserOpener is the command that opens a URL in the user's browser on
// system goos (the URL is appended): open on macOS, the URL protocol
// handler on Windows, xdg-open elsewhere.
func browserOpener(goos string) (name string, args []string) {
	switch goos {
	case "darwin":
		return "open", nil
	case "windows":
		return "rundll32", []string{"url.dll,FileProtocolHandler"}
	}
	return "xdg-open", nil
}
