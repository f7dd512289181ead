package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/llm"
)

// /tree shows the entries as a tree with the leaf marked; choosing the
// first answer with s has the model summarize the branch left, and the
// next prompt goes on from the first answer with the summary; choosing a
// user message puts its text back in the editor.
func TestTreePicker(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "first answer"}, {Text: "second answer"}, {Text: "SUMMARY OF TWO"}, {Text: "third answer"}}})
	tt.typ("one", keyEnter)
	tt.waitFor("first answer")
	tt.typ("/label start", keyEnter)
	tt.waitFor("labelled start")
	tt.typ("two", keyEnter)
	tt.waitFor("second answer")
	tt.typ("/tree", keyEnter)
	text := tt.waitFor("Go on from an entry")
	text = text[strings.LastIndex(text, "Go on from an entry"):]
	for _, want := range []string{"[start] assistant: first answer", "user: two", "▸ ", "assistant: second answer  ← current"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the tree lacks %q:\n%s", want, text)
		}
	}
	tt.typ(keyUp, keyUp, "s") // second answer → two → first answer
	tt.waitFor("with a summary of the branch left")
	tt.typ("three", keyEnter)
	tt.waitFor("third answer")
	got := tt.userTexts(3)
	if len(got) != 3 || got[0] != "one" || !strings.Contains(got[1], "SUMMARY OF TWO") || got[2] != "three" {
		t.Fatalf("after /tree the model got %q", got)
	}
	// A user message goes back to the editor; its parent is the leaf.
	tt.typ("/tree", keyEnter)
	tt.waitForN("Go on from an entry", 2)
	for range 20 {
		tt.typ(keyUp)
	}
	tt.typ(keyDown, keyDown, keyEnter) // the top is the model_change, then the thinking_level_change; then user: one
	tt.waitFor("the message was: one")
	tt.waitFor("> one") // in the editor, to send again
	if msgs := tt.conv.Messages(); len(msgs) != 0 {
		t.Fatalf("%d messages after going back before the first prompt", len(msgs))
	}
	tt.typ(keyCtrlC) // clears the editor
	// l labels the chosen entry: /label -e ID is put in the editor.
	tt.typ("/tree", keyEnter)
	tt.waitForN("Go on from an entry", 3)
	tt.typ(keyUp, "l")
	tt.waitFor("> /label -e ")
	tt.typ("picked", keyEnter)
	tt.waitFor("labelled picked")
	var labelled []string
	for id, l := range tt.conv.Session().Labels() {
		if l == "picked" {
			labelled = append(labelled, id)
		}
	}
	if len(labelled) != 1 {
		t.Fatalf("labels %v", tt.conv.Session().Labels())
	}
	tt.exit()
}

// /rewind N asks what to bring back; "files only" removes the file the
// turn wrote and keeps the conversation; rewinding further asks before
// overwriting a file changed since.
func TestRewindAndUndoInTUI(t *testing.T) {
	write := func(path, content string) llm.ScriptTurn {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{{Name: "write", Arguments: args}}}
	}
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{write("one.txt", "1"), {Text: "wrote one"}, write("two.txt", "2"), {Text: "wrote two"}}})
	tt.typ("make one", keyEnter)
	tt.waitFor("wrote one")
	tt.waitFor("scripted")
	tt.typ("make two", keyEnter)
	tt.waitFor("wrote two")
	tt.typ("/rewind", keyEnter)
	tt.waitFor("created two.txt")
	tt.typ("/rewind 2", keyEnter)
	tt.waitFor("Rewind to before turn 2")
	tt.typ(keyDown, keyEnter) // files only
	tt.waitFor("rewound to before turn 2 (files)")
	if _, err := os.Stat(filepath.Join(tt.dir, "two.txt")); !os.IsNotExist(err) {
		t.Fatalf("two.txt: %v", err)
	}
	if n := len(tt.conv.Messages()); n != 8 {
		t.Fatalf("%d messages after a files-only rewind", n)
	}
	// one.txt changed by the person: rewinding both turns asks before
	// overwriting it (two.txt is already as wanted: no question about
	// it); no changes nothing, yes restores.
	os.WriteFile(filepath.Join(tt.dir, "one.txt"), []byte("mine"), 0o644)
	tt.typ("/rewind 1 both", keyEnter)
	tt.waitFor("Overwrite files you changed?")
	tt.typ("n")
	tt.waitFor("restoring would overwrite them")
	if b, _ := os.ReadFile(filepath.Join(tt.dir, "one.txt")); string(b) != "mine" {
		t.Fatalf("one.txt was overwritten: %q", b)
	}
	tt.typ("/rewind 1 both", keyEnter)
	tt.waitForN("Overwrite files you changed?", 3) // the first dialog, its answer, the second
	tt.typ("y")
	tt.waitFor("rewound to before turn 1 (both)")
	if _, err := os.Stat(filepath.Join(tt.dir, "one.txt")); !os.IsNotExist(err) || len(tt.conv.Messages()) != 0 {
		t.Fatalf("one.txt %v, %d messages", err, len(tt.conv.Messages()))
	}
	tt.exit()
}
