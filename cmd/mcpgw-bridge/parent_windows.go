package main

import "golang.org/x/sys/windows"

// leaveWithParent waits on a handle to the parent process and calls stop when it exits.
// (Windows never reparents, so main's getppid poll cannot notice.)
func leaveWithParent(stop func()) {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(windows.Getppid()))
	if err != nil {
		return
	}
	go func() {
		ev, err := windows.WaitForSingleObject(h, windows.INFINITE)
		windows.CloseHandle(h)
		if err == nil && ev == windows.WAIT_OBJECT_0 {
			stop()
		}
	}()
}
