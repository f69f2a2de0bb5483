package sandbox

import (
	"os"
	"syscall"
)

// The sandbox's components are Linux and macOS binaries; on Windows these
// only keep the package building for the provider binary.

func childAttr() *syscall.SysProcAttr  { return nil }
func daemonAttr() *syscall.SysProcAttr { return nil }

func terminate(pid int, _ bool) error { return kill(pid, false) }

func kill(pid int, _ bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
