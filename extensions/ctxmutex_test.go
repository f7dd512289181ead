package extensions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCtxMutex: a waiter gives up when its context ends; the lock still
// works afterwards.
func TestCtxMutex(t *testing.T) {
	var m ctxMutex
	m.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := m.LockContext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext on a held lock = %v", err)
	}
	got := make(chan error)
	go func() { got <- m.LockContext(context.Background()) }()
	m.Unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	m.Unlock()
	if err := m.LockContext(ctx); err != nil { // free: taken even with a dead context
		t.Fatalf("LockContext on a free lock = %v", err)
	}
	m.Unlock()
}
