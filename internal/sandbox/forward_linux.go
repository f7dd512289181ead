//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
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
// clean-up reach both.
func forward(sock string, argv, env []string) int {
	runtime.LockOSThread() // the thread whose capabilities were dropped forks the command
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: proxy forwarder: %v\n", err)
		return ExitHelperFailed
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				up, err := net.Dial("unix", sock)
				if err != nil {
					c.Close()
					return
				}
				relay(c, up)
			}()
		}
	}()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: proxyEnv(env, "http://"+ln.Addr().String()),
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
	ln.Close()
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
