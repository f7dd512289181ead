// Command escape is a test helper that tries to get out of the process tree,
// session, process group, environment and cgroup it was started in, the
// ways a real program can. It runs its arguments as steps, left to right:
//
//	escape TOKEN STEP...
//
// TOKEN is any word; every process of the helper carries it in its command
// line, so a test finds them all in /proc. Steps:
//
//	log:FILE       append "PID STEP RESULT" lines to FILE from now on
//	fork           start a copy of itself with the remaining steps and exit
//	               (twice in a row: a double fork, the copy is orphaned)
//	setsid         start a new session
//	setpgid:PGID   join process group PGID (0: a new group)
//	envclear       re-execute itself with an empty environment (env -i)
//	closefds       close every descriptor, reopen 0-2 on /dev/null, cd /
//	ignoreterm     ignore SIGTERM, SIGINT and SIGHUP
//	cgroup:DIR     move itself into the cgroup DIR (write to cgroup.procs)
//	bomb:DEPTH     keep two copies of itself running with bomb:DEPTH-1 and
//	               the remaining steps, restarting each as soon as it exits;
//	               at depth 0 go on with the remaining steps
//	sleep:SECONDS  log "ready", then sleep (the last step; default 600)
//
// It is built by the tests (internal/testkit/proc) and is not part of pi.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var logFile string

func logf(format string, args ...any) {
	if logFile == "" {
		return
	}
	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d "+format+"\n", append([]any{os.Getpid()}, args...)...)
	f.Close()
}

func self() string {
	exe, err := os.Executable()
	if err != nil {
		return "/proc/self/exe"
	}
	return exe
}

// spawn starts a copy with the given steps, inheriting stdio.
func spawn(token string, steps []string) (*exec.Cmd, error) {
	cmd := exec.Command(self(), append([]string{token}, steps...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd, cmd.Start()
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: escape TOKEN STEP...")
		os.Exit(2)
	}
	token, steps := os.Args[1], os.Args[2:]
	for i := 0; i < len(steps); i++ {
		step := steps[i]
		rest := steps[i+1:]
		name, arg, _ := strings.Cut(step, ":")
		switch name {
		case "log":
			logFile = arg
		case "fork":
			if _, err := spawn(token, withLog(rest)); err != nil {
				logf("fork error %v", err)
				os.Exit(1)
			}
			logf("fork ok")
			os.Exit(0)
		case "setsid":
			_, err := syscall.Setsid()
			logf("setsid %s", result(err))
		case "setpgid":
			pgid, _ := strconv.Atoi(arg)
			err := syscall.Setpgid(0, pgid)
			logf("setpgid:%d %s", pgid, result(err))
		case "envclear":
			logf("envclear ok")
			err := syscall.Exec(self(), append([]string{self(), token}, withLog(rest)...), []string{})
			logf("envclear error %v", err)
			os.Exit(1)
		case "closefds":
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err == nil {
				for fd := 0; fd < 3; fd++ {
					_ = syscall.Dup2(int(null.Fd()), fd)
				}
				ents, _ := os.ReadDir("/proc/self/fd")
				for _, e := range ents {
					if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 && fd != int(null.Fd()) {
						syscall.CloseOnExec(fd)
					}
				}
				_ = os.Chdir("/")
			}
			logf("closefds %s", result(err))
			// Re-execute so that the descriptors marked close-on-exec
			// (including the Go runtime's) are really closed.
			err = syscall.Exec(self(), append([]string{self(), token}, withLog(rest)...), os.Environ())
			logf("closefds exec error %v", err)
			os.Exit(1)
		case "ignoreterm":
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			logf("ignoreterm ok")
		case "cgroup":
			err := os.WriteFile(filepath.Join(arg, "cgroup.procs"), []byte("0"), 0)
			logf("cgroup:%s %s", arg, result(err))
		case "bomb":
			depth, _ := strconv.Atoi(arg)
			if depth <= 0 {
				continue
			}
			bomb(token, append([]string{"bomb:" + strconv.Itoa(depth-1)}, withLog(rest)...))
		case "sleep":
			secs := 600.0
			if arg != "" {
				secs, _ = strconv.ParseFloat(arg, 64)
			}
			logf("ready")
			time.Sleep(time.Duration(secs * float64(time.Second)))
			return
		default:
			fmt.Fprintf(os.Stderr, "escape: unknown step %q\n", step)
			os.Exit(2)
		}
	}
}

// withLog carries the log step over to a copy.
func withLog(steps []string) []string {
	if logFile == "" {
		return steps
	}
	return append([]string{"log:" + logFile}, steps...)
}

// bomb keeps two copies running forever.
func bomb(token string, steps []string) {
	done := make(chan struct{}, 2)
	start := func() {
		cmd, err := spawn(token, steps)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			done <- struct{}{}
			return
		}
		go func() { _ = cmd.Wait(); done <- struct{}{} }()
	}
	start()
	start()
	logf("bomb started")
	for range done {
		start()
	}
}

func result(err error) string {
	if err != nil {
		if errno, ok := err.(syscall.Errno); ok {
			return "error " + errnoName(errno)
		}
		return "error " + err.Error()
	}
	return "ok"
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.EACCES:
		return "EACCES"
	case syscall.ESRCH:
		return "ESRCH"
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.ENOENT:
		return "ENOENT"
	}
	return e.Error()
}
