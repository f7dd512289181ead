//go:build unix

package mcp

import "syscall"

// procAttr puts a stdio server in a session and process group of its own,
// so that pi can end it with everything it started.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killGroup kills the process group led by pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
