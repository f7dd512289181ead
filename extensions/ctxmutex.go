package extensions

import (
	"context"
	"sync"
)

// ctxMutex is a mutex whose Lock can give up when a context ends. Calls
// into an extension are serialized with it; a call made while waiting for
// a tool.call (ABI 1.1) may need the lock of an extension that waits in
// turn, so every wait is bounded by the caller's context: two extensions
// that call each other's tools in parallel time out instead of hanging.
type ctxMutex struct {
	once sync.Once
	ch   chan struct{}
}

func (m *ctxMutex) sem() chan struct{} {
	m.once.Do(func() { m.ch = make(chan struct{}, 1) })
	return m.ch
}

// Lock waits for the mutex.
func (m *ctxMutex) Lock() { m.sem() <- struct{}{} }

// LockContext waits for the mutex until ctx ends; it returns ctx's error
// then, without the lock.
func (m *ctxMutex) LockContext(ctx context.Context) error {
	select {
	case m.sem() <- struct{}{}:
		return nil
	default:
	}
	select {
	case m.sem() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlock releases the mutex.
func (m *ctxMutex) Unlock() { <-m.sem() }
