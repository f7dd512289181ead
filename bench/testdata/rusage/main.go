// Command rusage runs a command (its standard output to /dev/null, its
// standard error kept) and prints "wall_s cpu_s maxrss_kb" of it: the
// wall time, the user + system CPU time from the kernel's accounting at
// microsecond precision (GNU time prints tens of milliseconds) and the
// peak resident set size. It fails with the command's error and standard
// error when the command fails.
//
// Usage: rusage CMD [ARGS...]
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rusage CMD [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rusage: %s: %v\n%s", os.Args[1], err, stderr.Bytes())
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("%.6f %.6f %d\n", wall.Seconds(), cpu.Seconds(), ru.Maxrss)
}
