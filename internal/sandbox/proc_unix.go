//go:build unix && !linux

package sandbox

import "syscall"

// childAttr puts a component in its own process group. Without Linux's
// Pdeathsig, components outlive a sandbox process that is killed outright;
// a normal stop still stops them.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
