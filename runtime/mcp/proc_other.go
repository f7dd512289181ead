//go:build !unix

package mcp

import "syscall"

// procAttr: without Unix process groups, a server is one process.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup: the SDK's transport ends the process itself.
func killGroup(int) {}
