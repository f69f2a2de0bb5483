package sandbox

import "syscall"

// childAttr puts a component in its own process group, and Pdeathsig makes
// the kernel kill it if the sandbox process dies: a crashed test leaves no
// component behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
