package upstream

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// joinKillOnCloseJob puts the calling process in a new job object that kills every
// process in it when its last handle closes. The handle is kept open and never inherited,
// so it closes when this process ends, however it ends (also TerminateProcess), and every
// process started since (they join the job at creation) goes with it. On Windows 8 and
// later jobs nest, so this works also when the process is already in a job.
func joinKillOnCloseJob() error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return err
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		windows.CloseHandle(job)
		return err
	}
	keptJobs = append(keptJobs, job) // open until the process ends
	return nil
}

var keptJobs []windows.Handle

// parentExit returns a channel closed when this process's parent exits (nil, never ready,
// when the parent cannot be opened).
func parentExit() <-chan struct{} {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(windows.Getppid()))
	if err != nil {
		return nil
	}
	ch := make(chan struct{})
	go func() {
		ev, err := windows.WaitForSingleObject(h, windows.INFINITE)
		windows.CloseHandle(h)
		if err == nil && ev == windows.WAIT_OBJECT_0 {
			close(ch)
		}
	}()
	return ch
}
