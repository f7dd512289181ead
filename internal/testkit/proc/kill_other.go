//go:build !unix

package proc

func syscallKill(pid int) error { return nil }
