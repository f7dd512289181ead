package rpcmode

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
)

// UI is the extension UI sub-protocol of RPC mode, as app.UI: a dialog
// (confirm, select, input) is an extension_ui_request line on stdout that
// waits for the client's extension_ui_response with the same id; notify is
// a request that waits for nothing. A dialog whose ctx ends (the run was
// aborted, the deadline passed) or that is pending when the stream ends
// gets the default answer (no, nothing).
type UI struct {
	out     *Output
	mu      sync.Mutex
	pending map[string]chan uiResponse
	closed  bool
	// shown are the statuses and widgets the extensions have set and not
	// cleared (key: statusKey or widgetKey; value: the method, and the
	// widget's placement), which a reload clears on the client.
	shown map[string]shownItem
}

// shownItem is one status or widget the client shows.
type shownItem struct{ method, placement string }

// uiResponse is an extension_ui_response: value (select, input),
// confirmed (confirm) or cancelled (any).
type uiResponse struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Value     *string `json:"value"`
	Confirmed *bool   `json:"confirmed"`
	Cancelled bool    `json:"cancelled"`
}

var _ app.UI = (*UI)(nil)

// NewUI is the UI that writes its requests to out.
func NewUI(out *Output) *UI {
	return &UI{out: out, pending: map[string]chan uiResponse{}}
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// dialog sends req (method and its fields) and waits for the answer; ok is
// false when ctx ended or the stream closed first.
func (u *UI) dialog(ctx context.Context, req map[string]any) (uiResponse, bool) {
	id := newUUID()
	ch := make(chan uiResponse, 1)
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return uiResponse{}, false
	}
	u.pending[id] = ch
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, id)
		u.mu.Unlock()
	}()
	req["type"], req["id"] = "extension_ui_request", id
	if dl, ok := ctx.Deadline(); ok {
		req["timeout"] = max(0, time.Until(dl).Milliseconds())
	}
	u.out.write(req)
	select {
	case r, ok := <-ch:
		return r, ok
	case <-ctx.Done():
		return uiResponse{}, false
	}
}

// resolve hands a client's extension_ui_response to the dialog waiting
// for it; responses to no pending dialog (late, unknown, repeated) are
// dropped.
func (u *UI) resolve(raw []byte) {
	var r uiResponse
	if json.Unmarshal(raw, &r) != nil {
		return
	}
	u.mu.Lock()
	ch, ok := u.pending[r.ID]
	delete(u.pending, r.ID)
	u.mu.Unlock()
	if ok {
		ch <- r
	}
}

// close answers every pending dialog with the default and refuses new
// ones (the input ended).
func (u *UI) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for id, ch := range u.pending {
		close(ch)
		delete(u.pending, id)
	}
}

// Confirm asks with method "confirm".
func (u *UI) Confirm(ctx context.Context, title, message string) (bool, error) {
	r, ok := u.dialog(ctx, map[string]any{"method": "confirm", "title": title, "message": message})
	if !ok || r.Cancelled || r.Confirmed == nil {
		return false, nil
	}
	return *r.Confirmed, nil
}

// Select asks with method "select".
func (u *UI) Select(ctx context.Context, title string, options []string) (string, bool, error) {
	shown := make([]string, len(options))
	for i, o := range options {
		shown[i] = termtext.Flat(o)
	}
	r, ok := u.dialog(ctx, map[string]any{"method": "select", "title": termtext.Flat(title), "options": shown})
	if !ok || r.Cancelled || r.Value == nil {
		return "", false, nil
	}
	// The answer is the option as given (its shown copy has no control
	// characters).
	for i, o := range shown {
		if o == *r.Value {
			return options[i], true, nil
		}
	}
	return *r.Value, true, nil
}

// Input asks with method "input".
func (u *UI) Input(ctx context.Context, title, placeholder string) (string, bool, error) {
	req := map[string]any{"method": "input", "title": termtext.Flat(title)}
	if placeholder != "" {
		req["placeholder"] = termtext.Flat(placeholder)
	}
	r, ok := u.dialog(ctx, req)
	if !ok || r.Cancelled || r.Value == nil {
		return "", false, nil
	}
	return *r.Value, true, nil
}

// Notify sends method "notify" and returns at once.
func (u *UI) Notify(message string, level app.NotifyLevel) {
	if level == "" {
		level = app.NotifyInfo
	}
	u.out.write(map[string]any{"type": "extension_ui_request", "id": newUUID(), "method": "notify", "message": message, "notifyType": string(level)})
}
