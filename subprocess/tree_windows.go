package subprocess

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tree is a child's process tree: a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE holding the child and everything it
// starts. Closing the job's last handle ends every process in it, so the
// tree ends with relay-baton however relay-baton ends (the kernel closes
// the handles of a killed process). The child is added to the job just
// after it starts: a process it starts in that first instant, before the
// assignment, is outside the job.
type tree struct {
	cmd   *exec.Cmd
	grace time.Duration
	job   windows.Handle
}

// start creates the job, then starts the child and puts it in the job.
func (t *tree) start() error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("create a job object for the child: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("set up the child's job object: %w", err)
	}
	// A process group of its own: CTRL_BREAK reaches the child alone.
	t.cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	t.job = job
	if err := t.cmd.Start(); err != nil {
		t.close()
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(t.cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		t.cmd.Process.Kill()
		t.cmd.Wait()
		t.close()
		return fmt.Errorf("put the child in its job object: %w", err)
	}
	return nil
}

// terminate asks the child to end (CTRL_BREAK to its process group).
func (t *tree) terminate() {
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.cmd.Process.Pid))
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

// waitDelay is how long the output is awaited once the child exited or
// was asked to end: the grace period.
func waitDelay(grace time.Duration) time.Duration { return grace }

// pid is the child's pid.
func (t *tree) pid() int { return t.cmd.Process.Pid }
