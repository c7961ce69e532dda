//go:build !unix && !windows

package conversation

// sysProcs cannot read process facts off Linux: a hook then decides from
// Claude Code's environment alone, and a recorded process counts as live.
type sysProcs struct{}

func (sysProcs) Cmdline(int) ([]string, error) { return nil, ErrProcUnsupported }
func (sysProcs) Stat(int) (ProcStat, error)    { return ProcStat{}, ErrProcUnsupported }
func (sysProcs) BootID() string                { return "" }
