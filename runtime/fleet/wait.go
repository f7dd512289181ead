package fleet

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Counts are how many of a set of tasks are where.
type Counts struct {
	Total, Queued, Running, Done, Failed, Canceled int
}

// Ended is the tasks done, failed or canceled.
func (c Counts) Ended() int { return c.Done + c.Failed + c.Canceled }

// Wait follows the tasks ids until every one has ended, writing a
// progress line to progress (nil: none) at each change: the counts, the
// rate and each failure. On a terminal (tty) the counts line is redrawn
// in place. It returns the final status of each task, in the order of ids.
//
// # Errors
//
// ctx ended first, or the watch broke.
func (f *Fleet) Wait(ctx context.Context, ids []string, progress io.Writer, tty bool) ([]*Status, error) {
	want := map[string]int{}
	for i, id := range ids {
		want[id] = i
	}
	final := make([]*Status, len(ids))
	latest := map[string]*Status{}
	start := time.Now()
	lastLine := ""
	report := func() Counts {
		c := Counts{Total: len(ids)}
		for id := range want {
			s := latest[id]
			switch {
			case s == nil, s.State == StateQueued:
				c.Queued++
			case s.State == StateRunning:
				c.Running++
			case s.State == StateDone:
				c.Done++
			case s.State == StateFailed:
				c.Failed++
			case s.State == StateCanceled:
				c.Canceled++
			}
		}
		return c
	}
	show := func(c Counts) {
		if progress == nil {
			return
		}
		el := time.Since(start)
		rate := 0.0
		if el > 0 {
			rate = float64(c.Ended()) / el.Minutes()
		}
		line := fmt.Sprintf("fleet: %d/%d ended: %d done, %d failed, %d canceled, %d running, %d queued; %.1f tasks/min, %s",
			c.Ended(), c.Total, c.Done, c.Failed, c.Canceled, c.Running, c.Queued, rate, el.Round(time.Second))
		if line[:len(line)-len(el.Round(time.Second).String())] == lastLine {
			return
		}
		lastLine = line[:len(line)-len(el.Round(time.Second).String())]
		if tty {
			fmt.Fprintf(progress, "\r\x1b[K%s", line)
		} else {
			fmt.Fprintln(progress, line)
		}
	}
	apply := func(s *Status) {
		i, ok := want[s.ID]
		if !ok {
			return
		}
		prev := latest[s.ID]
		// A record from before a retry is not this run's.
		if prev != nil && prev.Run > s.Run {
			return
		}
		latest[s.ID] = s
		if !Final(s.State) {
			final[i] = nil
			return
		}
		final[i] = s
		if s.State == StateFailed && progress != nil && (prev == nil || prev.State != StateFailed) {
			if tty {
				fmt.Fprint(progress, "\r\x1b[K")
			}
			fmt.Fprintf(progress, "fleet: task %s failed: %s\n", s.ID, s.Reason)
			lastLine = ""
		}
	}
	// The watch brings each change at once; a look at the tasks not ended
	// every few seconds covers a watch that a lost cluster node broke.
	updates := make(chan *Status, 256)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for wctx.Err() == nil {
			_ = f.Watch(wctx, func(s *Status, _ bool) {
				if s != nil {
					select {
					case updates <- s:
					case <-wctx.Done():
					}
				}
			})
			t := time.NewTimer(time.Second)
			select {
			case <-wctx.Done():
			case <-t.C:
			}
		}
	}()
	resync := time.NewTicker(3 * time.Second)
	defer resync.Stop()
	look := func() error {
		for _, id := range ids {
			if final[want[id]] != nil {
				continue
			}
			s, _, err := f.get(ctx, id)
			if err != nil {
				return err
			}
			apply(s)
		}
		return nil
	}
	if err := look(); err != nil {
		return final, err
	}
	for {
		c := report()
		show(c)
		if c.Ended() == c.Total {
			if tty && progress != nil {
				fmt.Fprintln(progress)
			}
			return final, nil
		}
		select {
		case <-ctx.Done():
			if tty && progress != nil {
				fmt.Fprintln(progress)
			}
			return final, ctx.Err()
		case s := <-updates:
			apply(s)
		case <-resync.C:
			_ = look()
		}
	}
}
