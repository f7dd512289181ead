package main

import (
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// TestTUIExtensionRunWhileIdle: a run an extension starts while the TUI
// is idle (agent.sendUserMessage from a shortcut) shows as a run — the
// extension's message, the streaming answer, the working indicator —
// and a line typed meanwhile is queued for it (not "already running");
// Esc cancels it and the undelivered line comes back to the editor. A
// command's message (its run starts once the command returned) shows
// the same way.
func TestTUIExtensionRunWhileIdle(t *testing.T) {
	p, _ := startUI12(t, "ui12run",
		openai.Reply{Text: "streamed by the extension run", StallAfter: 2},
		openai.Reply{Text: "answer to the typed line"},
		openai.Reply{Text: "answer to the command's message"},
		openai.Reply{Text: "the last answer"})
	p.run("send-keys", "-t", "pi", "F6")
	p.waitFor("› from the shortcut", "streamed by the extension run", "working… (Esc cancels)")
	p.typeLine("typed meanwhile")
	s := p.waitFor("queued: typed meanwhile")
	if strings.Contains(s, "already running") {
		t.Fatalf("the typed line was refused:\n%s", s)
	}
	p.run("send-keys", "-t", "pi", "Escape")
	p.waitFor("(turn cancelled)", "they are back in the editor", "> typed meanwhile")
	p.run("send-keys", "-t", "pi", "Enter")
	s = p.waitFor("answer to the typed line")
	if strings.Contains(s, "already running") {
		t.Fatalf("the prompt after the extension run was refused:\n%s", s)
	}
	// A command's message: its run starts once the command returned.
	p.typeLine("/later from the command")
	p.waitFor("› from the command", "answer to the command's message")
	p.typeLine("the last line")
	s = p.waitFor("the last answer")
	if strings.Contains(s, "already running") {
		t.Fatalf("a prompt after a command's run was refused:\n%s", s)
	}
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
}

// TestTUICustomMessages: an extension's message with display: true shows
// as "[customType]" then the guest's lines (a message renderer) or the
// content's text (none), escape sequences removed; and again when the
// session is resumed (the model got them as user messages).
func TestTUICustomMessages(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	shown := []string{"[note]\n  NOTE: hello" + escShown, "[plain]\n  bare words]0;pwned[2J31mredX\n  y"}
	p, _ := startUI12In(t, "ui12cm", dir, home, nil, "Enter sends", openai.Reply{Text: "the model saw them"})
	p.typeLine("/note hello")
	p.typeLine("/plain bare words")
	s := p.waitFor(shown...)
	p.typeLine("go on") // a session is saved once the model answered
	p.waitFor("the model saw them")
	if strings.Contains(s, "\x1b") || strings.Contains(s, "pwned\n") {
		t.Errorf("an escape sequence reached the screen:\n%s", s)
	}
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")

	// Resumed: shown again.
	p, _ = startUI12In(t, "ui12cm2", dir, home, []string{"-c"}, "resumed session")
	p.waitFor(shown...)
	p.run("send-keys", "-t", "pi", "C-d")
	p.waitFor("PI-EXIT=0")
}
