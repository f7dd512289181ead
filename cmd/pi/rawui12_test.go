package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRawGuestUI12Answers: a guest written without the SDK (raw11's
// /probe sends any host call and shows the raw answer) gets the answers
// docs/abi.md gives for ABI 1.2's ui methods where nobody is there (-p):
// dialogs no-ui, components no-tui, the rest {}, the editor's text "",
// and a clear error for a bad key, slot, placement or an unknown id.
func TestRawGuestUI12Answers(t *testing.T) {
	dir, script := rawProjectDir(t, "", `{"turns":[{"text":"unused"}]}`)
	for _, tc := range []struct{ call, want string }{
		{`ui.select {"title":"Pick","options":["a","b"],"timeoutMs":1000}`, `{"ok":true,"result":{"value":null,"reason":"no-ui"}}`},
		{`ui.input {"title":"Name"}`, `{"ok":true,"result":{"value":null,"reason":"no-ui"}}`},
		{`ui.editor {"title":"Story","prefill":"x"}`, `{"ok":true,"result":{"value":null,"reason":"no-ui"}}`},
		{`ui.component {"slot":"overlay"}`, `{"ok":true,"result":{"id":null,"reason":"no-tui"}}`},
		{`ui.setStatus {"key":"st","text":[{"text":"a","style":"bold"}]}`, `{"ok":true,"result":{}}`},
		{`ui.setStatus {"key":"st","text":null}`, `{"ok":true,"result":{}}`},
		{`ui.setWidget {"key":"w","lines":["a"],"placement":"belowEditor"}`, `{"ok":true,"result":{}}`},
		{`ui.setTitle {"title":"t"}`, `{"ok":true,"result":{}}`},
		{`ui.setWorkingMessage {"text":null}`, `{"ok":true,"result":{}}`},
		{`ui.setEditorText {"text":"x"}`, `{"ok":true,"result":{}}`},
		{`ui.getEditorText {}`, `{"ok":true,"result":{"text":""}}`},
		{`ui.setStatus {"key":"bad key","text":"x"}`, `{"ok":false,"error":{"message":"ui.setStatus: key \"bad key\" must match [A-Za-z0-9._-]{1,64}"}}`},
		{`ui.setWidget {"key":"w","lines":[],"placement":"sideways"}`, `{"ok":false,"error":{"message":"ui.setWidget: placement \"sideways\" must be aboveEditor or belowEditor"}}`},
		{`ui.component {"slot":"popup"}`, `{"ok":false,"error":{"message":"ui.component: slot \"popup\" must be overlay, widget, header, footer or editor"}}`},
		{`ui.close {"id":"c9"}`, `{"ok":false,"error":{"message":"ui.close: extension raw11 has no open component \"c9\""}}`},
		{`ui.setStatus {"key":"st","text":7}`, `{"ok":false,"error":{"message":"ui.setStatus: malformed params: a line is a string or an array of {text, style} spans"}}`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-p", "/probe " + tc.call, "--trust", "--script", script, "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Errorf("/probe %s: exit %d: %s", tc.call, code, stderr.String())
			continue
		}
		if got := strings.TrimSpace(stdout.String()); got != tc.want {
			t.Errorf("/probe %s answered\n%s\nwant\n%s", tc.call, got, tc.want)
		}
	}
}
