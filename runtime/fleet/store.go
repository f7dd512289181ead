package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// States of a task.
const (
	StateQueued   = "queued"
	StateRunning  = "running"
	StateDone     = "done"
	StateFailed   = "failed"
	StateCanceled = "canceled"
)

// Final says a state is an end: done, failed or canceled.
func Final(state string) bool {
	return state == StateDone || state == StateFailed || state == StateCanceled
}

// Status is a task's record in the bucket (key status.ID): the task, where
// it is, and once it ended, its result. Only one result is ever recorded
// for a run: the worker that ends a task does so by a compare-and-set on
// the revision it claimed it with.
type Status struct {
	ID    string   `json:"id"`
	State string   `json:"state"`
	Task  Task     `json:"task"`
	Label []string `json:"label,omitempty"`
	// Run counts the retries (1 for the first run); Attempt is the
	// delivery of the run's message that holds it.
	Run     int    `json:"run"`
	Attempt int    `json:"attempt,omitempty"`
	Worker  string `json:"worker,omitempty"`
	Claim   string `json:"claim,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Times.
	Submitted time.Time  `json:"submitted"`
	Started   *time.Time `json:"started,omitempty"`
	Finished  *time.Time `json:"finished,omitempty"`
	Result    *Result    `json:"result,omitempty"`
	// Source is the object holding the packed repo.
	Source string `json:"source,omitempty"`
}

// Result is what a finished run left.
type Result struct {
	ExitCode int    `json:"exitCode"`
	Text     string `json:"text"`
	Usage    Usage  `json:"usage"`
	// Objects in the object store.
	Patch   string `json:"patch,omitempty"`
	Session string `json:"session,omitempty"`
	Log     string `json:"log,omitempty"`
	// FilesChanged counts the files of the patch.
	FilesChanged int `json:"filesChanged"`
	// Seconds is the task's time on the worker (workspace, run, patch);
	// RunSeconds the pi run's alone.
	Seconds    float64 `json:"seconds"`
	RunSeconds float64 `json:"runSeconds"`
}

// Usage is the tokens and cost a run reported.
type Usage struct {
	Input  int     `json:"input"`
	Output int     `json:"output"`
	Total  int     `json:"totalTokens"`
	Cost   float64 `json:"cost"`
}

// message is a task on the stream: the task (Repo replaced by Source) for
// one run.
type message struct {
	ID     string `json:"id"`
	Run    int    `json:"run"`
	Task   Task   `json:"task"`
	Source string `json:"source,omitempty"` // object name of the packed repo
}

func statusKey(id string) string { return "status." + id }
func cancelKey(id string) string { return "cancel." + id }

// get reads a task's status and its revision.
//
// # Errors
//
// ErrNotFound when there is no such task.
func (f *Fleet) get(ctx context.Context, id string) (*Status, uint64, error) {
	var e jetstream.KeyValueEntry
	err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
		var err error
		e, err = f.kv.Get(ctx, statusKey(id))
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("task %s: %w", id, err)
	}
	var s Status
	if err := json.Unmarshal(e.Value(), &s); err != nil {
		return nil, 0, fmt.Errorf("task %s: a bad status record: %w", id, err)
	}
	return &s, e.Revision(), nil
}

// ErrNotFound is a task id that is not in the bucket.
var ErrNotFound = errors.New("no such task")

// errConflict is a compare-and-set that lost: someone else changed the
// status first.
var errConflict = errors.New("the status changed meanwhile")

// update writes s over revision rev (0: the key must not exist). A write
// that timed out but did happen (a cluster node lost meanwhile) counts
// as done when the record now holds s's claim and state.
func (f *Fleet) update(ctx context.Context, s *Status, rev uint64) (uint64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return 0, err
	}
	var nrev uint64
	tries := 0
	err = retry(ctx, 60*time.Second, func(ctx context.Context) error {
		tries++
		var err error
		if rev == 0 {
			nrev, err = f.kv.Create(ctx, statusKey(s.ID), b)
		} else {
			nrev, err = f.kv.Update(ctx, statusKey(s.ID), b, rev)
		}
		return err
	})
	if err == nil {
		return nrev, nil
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		if tries > 1 {
			cur, crev, gerr := f.get(ctx, s.ID)
			if gerr == nil && cur.Claim == s.Claim && cur.State == s.State && cur.Run == s.Run && cur.Attempt == s.Attempt {
				return crev, nil
			}
		}
		return 0, errConflict
	}
	return 0, err
}

// Get is a task's status.
//
// # Errors
//
// ErrNotFound (wrapped) for an unknown id; the server's errors.
func (f *Fleet) Get(ctx context.Context, id string) (*Status, error) {
	s, _, err := f.get(ctx, id)
	return s, err
}

// List is the status of every task, or of those with label when it is
// not empty, in submission order.
func (f *Fleet) List(ctx context.Context, label string) ([]*Status, error) {
	w, err := f.kv.Watch(ctx, "status.*", jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []*Status
	for e := range w.Updates() {
		if e == nil {
			break
		}
		var s Status
		if json.Unmarshal(e.Value(), &s) != nil {
			continue
		}
		if label == "" || slices.Contains(s.Label, label) {
			out = append(out, &s)
		}
	}
	slices.SortStableFunc(out, func(a, b *Status) int { return a.Submitted.Compare(b.Submitted) })
	return out, nil
}

// Watch calls fn with every task's status, the current ones first then
// every change, until ctx ends.
func (f *Fleet) Watch(ctx context.Context, fn func(s *Status, initialDone bool)) error {
	w, err := f.kv.Watch(ctx, "status.*", jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	initial := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the status watch ended")
			}
			if e == nil {
				initial = true
				fn(nil, true)
				continue
			}
			var s Status
			if json.Unmarshal(e.Value(), &s) == nil {
				fn(&s, initial)
			}
		}
	}
}

// Submitted is a task accepted by Submit.
type Submitted struct {
	ID string `json:"id"`
}

// Submit queues tasks (already limited by the submitter's Policy): packs
// each local repo into the object store (once per content), records the
// task queued and publishes it. A task whose id is already in the bucket
// is an error for that task; the others go on.
//
// # Errors
//
// Joined per task, each naming its id.
func (f *Fleet) Submit(ctx context.Context, tasks []Task) ([]Submitted, error) {
	var out []Submitted
	var errs []error
	packed := map[string]string{}
	for i := range tasks {
		t := tasks[i]
		if t.ID == "" {
			id, err := randomHex(8)
			if err != nil {
				return out, err
			}
			t.ID = "t" + id
		}
		m := message{ID: t.ID, Run: 1, Task: t}
		if t.Repo != "" {
			name, ok := packed[t.Repo]
			if !ok {
				var err error
				if name, err = f.putSource(ctx, t.Repo); err != nil {
					errs = append(errs, fmt.Errorf("task %s: repo %s: %w", t.ID, t.Repo, err))
					continue
				}
				packed[t.Repo] = name
			}
			m.Source = name
		}
		now := time.Now().UTC()
		s := &Status{ID: t.ID, State: StateQueued, Task: t, Label: t.Label, Run: 1, Submitted: now, Source: m.Source}
		if _, err := f.update(ctx, s, 0); err != nil {
			if errors.Is(err, errConflict) {
				err = fmt.Errorf("the id is taken (pi fleet retry %s runs it again)", t.ID)
			}
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
			continue
		}
		if err := f.publish(ctx, &m); err != nil {
			// Not queued: forget the record so that the id can be
			// submitted again (else pi fleet retry publishes it).
			_ = retry(ctx, 10*time.Second, func(ctx context.Context) error { return f.kv.Delete(ctx, statusKey(t.ID)) })
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
			continue
		}
		out = append(out, Submitted{ID: t.ID})
	}
	return out, errors.Join(errs...)
}

func (f *Fleet) publish(ctx context.Context, m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	msg := &nats.Msg{Subject: TaskSubject, Data: b, Header: nats.Header{}}
	return retry(ctx, 60*time.Second, func(ctx context.Context) error {
		_, err := f.js.PublishMsg(ctx, msg, jetstream.WithMsgID(fmt.Sprintf("%s/%d", m.ID, m.Run)))
		return err
	})
}

// Cancel stops a task: a queued one is canceled at once, a running one
// is stopped by its worker (through pi: the run is interrupted and its
// commands killed) and recorded canceled.
//
// # Errors
//
// ErrNotFound for an unknown id; a task that already ended.
func (f *Fleet) Cancel(ctx context.Context, id string) (*Status, error) {
	for {
		s, rev, err := f.get(ctx, id)
		if err != nil {
			return nil, err
		}
		if Final(s.State) {
			return s, fmt.Errorf("task %s already %s", id, s.State)
		}
		if err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
			_, err := f.kv.Put(ctx, cancelKey(id), []byte(fmt.Sprint(s.Run)))
			return err
		}); err != nil {
			return nil, err
		}
		if s.State == StateRunning {
			return s, nil // the worker ends it
		}
		now := time.Now().UTC()
		s.State, s.Reason, s.Finished = StateCanceled, "canceled before it started", &now
		if _, err := f.update(ctx, s, rev); errors.Is(err, errConflict) {
			continue // a worker took it meanwhile: it sees the cancel key
		} else if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// Retry runs an ended task again, as a new run with the same id. A task
// still queued is published again (a publish that was lost; a duplicate
// delivery of a run finds its result and is dropped).
//
// # Errors
//
// ErrNotFound; a running task.
func (f *Fleet) Retry(ctx context.Context, id string) (*Status, error) {
	s, rev, err := f.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.State == StateQueued {
		return s, f.publish(ctx, &message{ID: id, Run: s.Run, Task: s.Task, Source: s.Source})
	}
	if !Final(s.State) {
		return s, fmt.Errorf("task %s is %s: a running task is not retried (cancel it first)", id, s.State)
	}
	src := s.Source
	n := &Status{ID: id, State: StateQueued, Task: s.Task, Label: s.Label, Run: s.Run + 1, Submitted: time.Now().UTC(), Source: src}
	if _, err := f.update(ctx, n, rev); err != nil {
		if errors.Is(err, errConflict) {
			return nil, fmt.Errorf("task %s changed meanwhile; try again", id)
		}
		return nil, err
	}
	if err := retry(ctx, 30*time.Second, func(ctx context.Context) error { return f.kv.Delete(ctx, cancelKey(id)) }); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, err
	}
	if err := f.publish(ctx, &message{ID: id, Run: n.Run, Task: s.Task, Source: src}); err != nil {
		return nil, err
	}
	return n, nil
}

// Object reads an object of a result (Result.Patch, .Session, .Log).
func (f *Fleet) Object(ctx context.Context, name string) ([]byte, error) {
	var b []byte
	err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
		var err error
		b, err = f.obs.GetBytes(ctx, name)
		return err
	})
	return b, err
}

// Objects lists the names of the stored objects starting with prefix.
func (f *Fleet) Objects(ctx context.Context, prefix string) ([]string, error) {
	infos, err := f.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, i := range infos {
		if strings.HasPrefix(i.Name, prefix) {
			out = append(out, i.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}
