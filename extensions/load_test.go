package extensions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

func TestLoadAndExecute(t *testing.T) {
	var logs logBuffer
	h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
	path := wat(t, "good")
	sum, err := extensions.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, h, extensions.Spec{Name: "good", Path: path, SHA256: sum, Grants: extensions.Grants{Exec: []string{"echo"}}})
	info := e.Info()
	if info.Name != "good" || info.Version != "1.2.3" || info.SHA256 != sum || len(info.Tools) != 5 {
		t.Fatalf("info = %+v", info)
	}
	ts := tools(t, e)
	r := run(context.Background(), ts, nil, "hello", `{"name":"x"}`)
	if r.IsError || r.Text() != "hello from wat" {
		t.Fatalf("hello = %+v", r)
	}
	if !strings.Contains(logs.String(), "ext.good: hello called") {
		t.Fatalf("guest log line missing from logs:\n%s", logs.String())
	}
	r = run(context.Background(), ts, nil, "fail", `{}`)
	if !r.IsError || r.Text() != "the fail tool always fails" {
		t.Fatalf("fail = %+v", r)
	}
	var updates []tool.Result
	r = tool.Run(context.Background(), ts, nil, "progress", "c", []byte(`{}`), func(p tool.Result) { updates = append(updates, p) })
	if r.Text() != "progress done" || len(updates) != 2 || updates[1].Text() != "step 2" {
		t.Fatalf("progress = %+v, updates %+v", r, updates)
	}
	r = run(context.Background(), ts, nil, "exec", `{}`)
	t.Logf("exec: %+v", r)
	r = run(context.Background(), ts, nil, "forbidden", `{}`)
	t.Logf("forbidden: %+v", r)
}
