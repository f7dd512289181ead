package rpcmode

import (
	"context"
	"slices"
	"strings"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
)

// RPC's share of ABI 1.2's extension UI (docs/abi.md, "Front ends";
// docs/rpc.md): the editor dialog is an extension_ui_request "editor"
// answered like select and input; statuses, widgets, the title and the
// editor's text are fire-and-forget requests in the reference's shapes
// (setStatus {statusKey, statusText?}, setWidget {widgetKey, widgetLines?,
// widgetPlacement}, setTitle {title}, set_editor_text {text}), keys written
// NAME:KEY, no text or lines clearing; lines are sent as their text with
// every control character removed. Components answer "no-tui"; the
// working message is ignored; the editor's text is "".

var _ app.ExtensionUI = (*UI)(nil)

// Editor asks with method "editor".
func (u *UI) Editor(ctx context.Context, title, prefill string) (string, bool, error) {
	req := map[string]any{"method": "editor", "title": termtext.Flat(title)}
	if prefill != "" {
		req["prefill"] = termtext.Printable(prefill)
	}
	r, ok := u.dialog(ctx, req)
	if !ok || r.Cancelled || r.Value == nil {
		return "", false, nil
	}
	return *r.Value, true, nil
}

// fire sends a request that waits for nothing.
func (u *UI) fire(req map[string]any) {
	req["type"], req["id"] = "extension_ui_request", newUUID()
	u.out.write(req)
}

func flat(l app.Line) string { return termtext.Flat(l.Text()) }

// SetStatus sends method "setStatus"; a clear has no statusText.
func (u *UI) SetStatus(extension, key string, text app.Line) {
	id := extension + ":" + key
	req := map[string]any{"method": "setStatus", "statusKey": id}
	if text != nil {
		req["statusText"] = flat(text)
	}
	u.note(id, shownItem{method: "setStatus"}, text != nil)
	u.fire(req)
}

// SetWidget sends method "setWidget"; a clear has no widgetLines.
func (u *UI) SetWidget(extension, key string, lines []app.Line, placement string) {
	id := extension + ":" + key
	req := map[string]any{"method": "setWidget", "widgetKey": id, "widgetPlacement": placement}
	if lines != nil {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = flat(l)
		}
		req["widgetLines"] = out
	}
	u.note(id, shownItem{method: "setWidget", placement: placement}, lines != nil)
	u.fire(req)
}

// note records that the client shows (or no longer shows) a status or a
// widget.
func (u *UI) note(id string, it shownItem, shown bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !shown {
		delete(u.shown, it.method+" "+id)
		return
	}
	if u.shown == nil {
		u.shown = map[string]shownItem{}
	}
	u.shown[it.method+" "+id] = it
}

// clearShown clears on the client every status and widget the
// extensions left, as the TUI does when the extensions are loaded again
// (their new instances set their own).
func (u *UI) clearShown() {
	u.mu.Lock()
	shown := u.shown
	u.shown = nil
	u.mu.Unlock()
	keys := make([]string, 0, len(shown))
	for k := range shown {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		it := shown[k]
		_, id, _ := strings.Cut(k, " ")
		if it.method == "setStatus" {
			u.fire(map[string]any{"method": "setStatus", "statusKey": id})
		} else {
			u.fire(map[string]any{"method": "setWidget", "widgetKey": id, "widgetPlacement": it.placement})
		}
	}
}

// SetTitle sends method "setTitle".
func (u *UI) SetTitle(extension, title string) {
	u.fire(map[string]any{"method": "setTitle", "title": termtext.Flat(title)})
}

// SetEditorText sends method "set_editor_text".
func (u *UI) SetEditorText(extension, text string) {
	u.fire(map[string]any{"method": "set_editor_text", "text": termtext.Printable(text)})
}

// SetWorkingMessage is ignored in RPC mode (as in the reference).
func (u *UI) SetWorkingMessage(string, *string) {}

// EditorText is "" in RPC mode: the client's editor is its own.
func (u *UI) EditorText() (string, bool) { return "", false }

// OpenComponent answers "no-tui": RPC has no terminal UI.
func (u *UI) OpenComponent(*app.Component) bool { return false }

// RerenderComponent and CloseComponent have no component to act on.
func (u *UI) RerenderComponent(*app.Component) {}
func (u *UI) CloseComponent(*app.Component)    {}
