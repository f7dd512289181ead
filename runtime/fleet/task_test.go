package fleet

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTasks(t *testing.T) {
	good := `{"id":"a1","repo":"r","prompt":"fix it","model":"openai/gpt-4.1-mini","label":["x","y"]}
# a comment

{"git":"https://example.com/r.git","rev":"v1.2","prompt":["one","two"],"max-turns":5,"timeout":"10m","tools":"read,bash"}
`
	// A path is a message, not a command.
	if _, err := ParseTasks(strings.NewReader(`{"repo":"r","prompt":"/src/main.go crashes: fix it"}`), "f"); err != nil {
		t.Fatalf("a prompt starting with a path: %v", err)
	}
	tasks, err := ParseTasks(strings.NewReader(good), "tasks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].ID != "a1" || len(tasks[0].Label) != 2 || len(tasks[1].Prompt) != 2 || tasks[1].MaxTurns != 5 {
		t.Fatalf("tasks = %+v", tasks)
	}
	for _, tc := range []struct{ line, want string }{
		{`{"repo":"r","prompt":"p","base_url":"http://evil"}`, `tasks.jsonl:2: field "base_url": a task cannot choose the endpoint`},
		{`{"repo":"r","prompt":"p","api_key":"sk"}`, `tasks.jsonl:2: field "api_key": a task cannot choose the key`},
		{`{"repo":"r","prompt":"p","script":"x.json"}`, `field "script": a task cannot choose the model`},
		{`{"repo":"r","prompt":"p","colour":"red"}`, `tasks.jsonl:2: field "colour": unknown field`},
		{`{"repo":"r"}`, `tasks.jsonl:2: field "prompt": a task needs a prompt`},
		{`{"prompt":"p"}`, `field "repo": a task needs a workspace`},
		{`{"repo":"r","prompt":"p","max-turns":"five"}`, `field "max-turns": want int, got string`},
		{`{"repo":"r","prompt":"p","timeout":"soon"}`, `field "timeout": "soon": want a duration`},
		{`{"repo":"r","prompt":"p","model":"--base-url=http://evil"}`, `field "model": "--base-url=http://evil" is not a model name`},
		{`{"git":"--upload-pack=touch /tmp/x","prompt":"p"}`, `field "git"`},
		{`{"git":"file:///home/worker/secrets","prompt":"p"}`, `field "git": "file:///home/worker/secrets": want an https://`},
		{`{"git":"/home/worker/secrets","prompt":"p"}`, `field "git"`},
		{`{"git":"ext::sh -c touch% /tmp/pwned","prompt":"p"}`, `field "git"`},
		{`{"git":"https://h/r","rev":"--output=/etc/x","prompt":"p"}`, `field "rev"`},
		{`{"repo":"r","prompt":"p","id":"a/b"}`, `field "id"`},
		{`{"repo":"r","prompt":"p","thinking":"max"}`, `field "thinking"`},
		{`[1,2]`, `tasks.jsonl:2: not a JSON object`},
		{`{"repo":"r","prompt":"/export /home/w/.bashrc"}`, `field "prompt": "/export /home/w/.bashrc" is the slash command /export`},
		{`{"repo":"r","prompt":["fine", "  /import /etc/passwd"]}`, `is the slash command /import`},
		{`{"repo":"r","prompt":"/plan off"}`, `is the slash command /plan`},
		{`{"repo":"r","prompt":"p","id":"a1"}`, `tasks.jsonl:2: field "id": "a1" is also the id of line 1`},
	} {
		_, err := ParseTasks(strings.NewReader(`{"repo":"r","prompt":"p","id":"a1"}`+"\n"+tc.line+"\n"), "tasks.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.line, err, tc.want)
		}
	}
	// Every bad line is named, not only the first.
	_, err = ParseTasks(strings.NewReader("{}\n{\"repo\":\"r\",\"prompt\":\"p\"}\n{\"x\":1}\n"), "f")
	var fe *FieldError
	if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), "f:1:") || !strings.Contains(err.Error(), "f:3:") {
		t.Fatalf("err = %v", err)
	}
}

func TestPolicyLimit(t *testing.T) {
	p := Policy{Tools: []string{"read", "bash"}, Sandbox: "workspace-write", MaxTurns: 10}
	tk := Task{Repo: "r", Prompt: Strings{"p"}}
	if err := p.Limit(&tk); err != nil {
		t.Fatal(err)
	}
	if strings.Join(tk.Tools, ",") != "read,bash" || tk.Sandbox != "workspace-write" || tk.MaxTurns != 10 {
		t.Fatalf("defaults not filled in: %+v", tk)
	}
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Task{Tools: Strings{"write"}}, `field "tools": "write" is not active`},
		{Task{Sandbox: "off"}, `field "sandbox": "off" is looser`},
		{Task{Sandbox: "full"}, `field "sandbox": "full" is looser`},
		{Task{MaxTurns: 11}, `field "max-turns": 11 is more`},
	} {
		if err := p.Limit(&tc.task); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.task, err, tc.want)
		}
	}
	stricter := Task{Sandbox: "read-only", Tools: Strings{"read"}, MaxTurns: 3}
	if err := p.Limit(&stricter); err != nil {
		t.Errorf("a stricter task refused: %v", err)
	}
	// No configured sandbox is workspace-write: off is looser.
	if err := (Policy{}).Limit(&Task{Sandbox: "off"}); err == nil {
		t.Error("sandbox off accepted under the default workspace-write")
	}
}
