//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// proxyVars are the variables that point a command at the proxy; noProxy
// are those that would send some hosts around it (to nothing: only the
// proxy is reachable), dropped.
var (
	proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}
	noProxy   = []string{"NO_PROXY=", "no_proxy="}
)

// proxyEnv is env pointing at the forwarder on url.
func proxyEnv(env []string, url string) []string {
	out := make([]string, 0, len(env)+len(proxyVars))
	for _, kv := range env {
		drop := false
		for _, v := range proxyVars {
			drop = drop || strings.HasPrefix(kv, v+"=")
		}
		for _, v := range noProxy {
			drop = drop || strings.HasPrefix(kv, v)
		}
		if !drop {
			out = append(out, kv)
		}
	}
	for _, v := range proxyVars {
		out = append(out, v+"="+url)
	}
	return out
}

// forward runs argv under network "allow": the helper (already sandboxed,
// in the command's network namespace, whose only interface is its own
// loopback) listens on 127.0.0.1 there, starts the command with the proxy
// variables naming that port, and relays every connection to the proxy's
// Unix socket outside, until the command ends; then it exits as the
// command did (a signal that killed the command kills the helper too).
// The helper stays the command's parent, so the bash tool's timeout and
// clean-up reach both. Plain system calls, not package net: the helper's
// package must start fast (docs/performance.md).
func forward(sock string, argv, env []string) int {
	runtime.LockOSThread() // the thread whose capabilities were dropped forks the command
	ln, port, err := listenLoopback()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: proxy forwarder: %v\n", err)
		return ExitHelperFailed
	}
	go func() {
		for {
			c, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
			if err == unix.EINTR || err == unix.ECONNABORTED {
				continue
			}
			if err != nil {
				return
			}
			go func() {
				up, err := dialUnix(sock)
				if err != nil {
					unix.Close(c)
					return
				}
				relayFDs(c, up)
			}()
		}
	}()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: proxyEnv(env, "http://127.0.0.1:"+strconv.Itoa(port)),
		Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: exec %s: %v\n", argv[0], err)
		return ExitHelperFailed
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// listenLoopback listens on 127.0.0.1 at a port the kernel picks.
func listenLoopback() (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	if err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err == nil {
		err = unix.Listen(fd, 128)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// dialUnix connects to the Unix socket at path.
func dialUnix(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// relayFDs copies the sockets a and b into each other (blocking, one
// thread each way) until both directions end, passing each end of stream
// on as a half close; then closes both.
func relayFDs(a, b int) {
	done := make(chan struct{})
	half := func(dst, src int) {
		buf := make([]byte, 32<<10)
		for {
			n, err := unix.Read(src, buf)
			if err == unix.EINTR {
				continue
			}
			if n <= 0 || err != nil {
				break
			}
			if !writeAll(dst, buf[:n]) {
				break
			}
		}
		_ = unix.Shutdown(dst, unix.SHUT_WR)
		done <- struct{}{}
	}
	go half(a, b)
	half(b, a)
	<-done
	unix.Close(a)
	unix.Close(b)
}

// writeAll writes b whole to fd.
func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}
