package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pi-go/pi/runtime/app"
)

// helpExtWait bounds how long --help waits for the extensions to load
// (a module from the lazy-load records or the compilation cache loads in
// milliseconds; one compiled for the first time may not).
const helpExtWait = 2 * time.Second

// printExtensionHelp adds to a --help the flags the extensions of this
// command line and pi.toml declare (ABI 1.2), in their own section. Help
// never fails for them: an extension that does not load, or not within
// helpExtWait, is one line saying so. Nothing is printed when no loaded
// extension declares a flag.
func printExtensionHelp(c *commonFlags, stdout io.Writer) {
	opts := c.appOptions(io.Discard, app.ModelOptions{})
	opts.OnWarning = func(string) {}
	opts.CompileProgress = nil
	opts.MCPStart = app.MCPLazy
	type opened struct {
		rt  *app.Runtime
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), helpExtWait)
	defer cancel()
	done := make(chan opened, 1)
	go func() {
		rt, err := app.Open(ctx, opts)
		done <- opened{rt, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-ctx.Done():
		// Open ends on its own (ctx is cancelled); pi exits meanwhile.
		fmt.Fprintf(stdout, "\nExtension flags: not listed: the extensions did not load within %s (run pi once to compile them)\n", helpExtWait)
		return
	}
	if o.err != nil {
		msg, _, _ := strings.Cut(o.err.Error(), "\n")
		fmt.Fprintf(stdout, "\nExtension flags: not listed: %s\n", msg)
		return
	}
	defer o.rt.Close()
	flags := o.rt.ExtensionFlags()
	if len(flags) == 0 {
		return
	}
	fmt.Fprintln(stdout, "\nExtension flags:")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, f := range flags {
		name := "--" + f.Name
		if f.Type != "boolean" {
			name += " VALUE"
		}
		desc := f.Description
		if len(f.Default) > 0 && string(f.Default) != "null" {
			desc += " (default " + string(f.Default) + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, "["+f.Extension+"]", desc)
	}
	tw.Flush()
}
