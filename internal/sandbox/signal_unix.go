//go:build unix

package sandbox

import "syscall"

// daemonAttr gives the background sandbox process its own session, so it
// outlives the command and terminal that started it.
func daemonAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// terminate asks a process (group, when group is set) to stop; kill forces it.
func terminate(pid int, group bool) error { return syscall.Kill(target(pid, group), syscall.SIGTERM) }
func kill(pid int, group bool) error      { return syscall.Kill(target(pid, group), syscall.SIGKILL) }

func target(pid int, group bool) int {
	if group {
		return -pid
	}
	return pid
}

// processAlive reports whether a process with this PID exists.
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
