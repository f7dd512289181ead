package tui

import (
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
	tt.typ(keyDown, keyEnter) // the top is the model_change; then user: one
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
