//go:build !unix

package proctest

func syscallKill(pid int) error { return nil }
