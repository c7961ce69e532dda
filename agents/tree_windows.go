package agents

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tree is an agent's process tree: a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE holding the agent and everything it
// starts. Closing the job's last handle ends every process in it, so the
// tree ends with relay-baton however relay-baton ends (the kernel closes
// the handles of a killed process). The agent is added to the job just
// after it starts: a process it starts in that first instant, before the
// assignment, is outside the job.
type tree struct {
	job windows.Handle
	pid int
}

func startTree(cmd *exec.Cmd) (*tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a job object for the agent: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("set up the agent's job object: %w", err)
	}
	// A process group of its own: CTRL_BREAK reaches the agent alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	t := &tree{job: job, pid: cmd.Process.Pid}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(t.pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("put the agent in its job object: %w", err)
	}
	return t, nil
}

// terminate asks the agent to end (CTRL_BREAK to its process group).
func (t *tree) terminate() {
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.pid))
}

// kill ends every process in the job.
func (t *tree) kill() {
	if t.job != 0 {
		_ = windows.TerminateJobObject(t.job, 1)
	}
}

// close closes the job: whatever is left in it ends.
func (t *tree) close() {
	if t.job != 0 {
		windows.CloseHandle(t.job)
		t.job = 0
	}
}

// openNoFollow: Windows has no such open flags; callers check the opened
// file against the path (sameAsPath).
const openNoFollow = 0
