package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/cmd/pi/internal/textmode"
	"github.com/pi-go/pi/runtime/app"
)

// compileProgress shows a module's first compile on w (stderr): one line
// before the wait, "compiling loc.wasm (first load only)…", and how long
// it took at the end. On a terminal the line counts the seconds while it
// waits and ends in place; elsewhere it is two plain lines.
func compileProgress(w io.Writer) app.CompileProgress {
	if f, ok := termtext.Raw(w).(*os.File); ok && textmode.IsTerminal(f) {
		return compileProgressTo(f, true, time.Second) // its own carriage returns
	}
	return compileProgressTo(w, false, time.Second)
}

// compileProgressTo is compileProgress with the terminal decision and the
// tick of the seconds counter given.
func compileProgressTo(w io.Writer, terminal bool, tick time.Duration) app.CompileProgress {
	var mu sync.Mutex // one line at a time when two modules compile at once
	return func(file string) func(time.Duration, error) {
		file = termtext.Printable(file) // w may be the raw terminal
		label := fmt.Sprintf("pi: compiling %s (first load only)…", file)
		mu.Lock()
		if terminal {
			fmt.Fprint(w, label)
		} else {
			fmt.Fprintln(w, label)
		}
		mu.Unlock()
		stop, exited := make(chan struct{}), make(chan struct{})
		start := time.Now()
		go func() {
			defer close(exited)
			if !terminal {
				return
			}
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					mu.Lock()
					fmt.Fprintf(w, "\r%s %ds", label, int(time.Since(start).Seconds()))
					mu.Unlock()
				case <-stop:
					return
				}
			}
		}()
		return func(elapsed time.Duration, err error) {
			close(stop)
			<-exited
			status := fmt.Sprintf("done in %.1fs", elapsed.Seconds())
			if err != nil {
				status = fmt.Sprintf("failed after %.1fs", elapsed.Seconds())
			}
			mu.Lock()
			defer mu.Unlock()
			if terminal {
				fmt.Fprintf(w, "\r%s %s\n", label, status)
			} else {
				fmt.Fprintf(w, "pi: compiled %s: %s\n", file, status)
			}
		}
	}
}
