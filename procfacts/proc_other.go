//go:build !unix && !windows

package procfacts

// sysProcs cannot read process facts off Linux: a hook then decides from
// Claude Code's environment alone, and a recorded process counts as live.
type sysProcs struct{}

func (sysProcs) Cmdline(int) ([]string, error) { return nil, ErrUnsupported }
func (sysProcs) Stat(int) (Stat, error)        { return Stat{}, ErrUnsupported }
func (sysProcs) BootID() string                { return "" }
