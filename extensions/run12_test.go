package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// waitLog is a log sink a test can wait on: Wait returns once the log
// holds a line with every one of the given strings (or fails the test
// after a generous deadline, which only a broken host reaches).
type waitLog struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
}

func newWaitLog() *waitLog { return &waitLog{changed: make(chan struct{})} }

func (w *waitLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *waitLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// line returns the first log line holding every part, and a channel that
// is closed at the next write.
func (w *waitLog) line(parts ...string) (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(w.buf.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l, nil
		}
	}
	return "", w.changed
}

func (w *waitLog) Wait(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l, ch := w.line(parts...)
		if ch == nil {
			return l
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no log line with %q; the log:\n%s", parts, w.String())
		}
	}
}

func (w *waitLog) Count(parts ...string) int {
	n := 0
	for _, l := range strings.Split(w.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}

func run12Host(t *testing.T, opts extensions.Options) (*extensions.Host, *waitLog) {
	t.Helper()
	wl := newWaitLog()
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "pi", Output: wl, Level: hclog.Debug, DisableTime: true})
	if opts.Mode == "" {
		opts.Mode = extensions.ModeInteractive
	}
	return newHost(t, opts), wl
}

// call12 runs the tool name of the loaded extensions with input and
// returns its text; an error result fails the test unless wantErr.
func call12(t *testing.T, h *extensions.Host, name, input string, wantErr bool) string {
	t.Helper()
	var defs []tool.ToolDefinition
	for _, e := range h.Extensions() {
		defs = append(defs, e.Definitions()...)
	}
	ts, err := tool.WrapAll(defs, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := run(context.Background(), ts, nil, name, input)
	if res.IsError != wantErr {
		t.Fatalf("%s %s: isError %v, want %v: %s", name, input, res.IsError, wantErr, res.Text())
	}
	return res.Text()
}

func TestRun12Flags(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	h, _ := run12Host(t, extensions.Options{ReservedFlags: []string{"model", "print"}})
	load(t, h, extensions.Spec{Path: guest})

	if got := call12(t, h, "flags", `{}`, false); got != `{"greeting":"hi","loud":false,"who":null}` {
		t.Errorf("defaults: %s", got)
	}
	var names []string
	for _, f := range h.Flags() {
		names = append(names, f.Extension+":"+f.Name+":"+f.Type)
	}
	if strings.Join(names, " ") != "run12:greeting:string run12:loud:boolean run12:who:string" {
		t.Errorf("Flags: %v", names)
	}
	if err := h.SetFlagValues(map[string]string{"loud": "true", "who": "world"}); err != nil {
		t.Fatal(err)
	}
	if got := call12(t, h, "flags", `{}`, false); got != `{"greeting":"hi","loud":true,"who":"world"}` {
		t.Errorf("given: %s", got)
	}
	for _, tc := range []struct {
		vals map[string]string
		want string
	}{
		{map[string]string{"nope": "x"}, "unknown flag --nope"},
		{map[string]string{"loud": "maybe"}, `flag --loud takes true or false, got "maybe"`},
	} {
		if err := h.SetFlagValues(tc.vals); err == nil || err.Error() != tc.want {
			t.Errorf("SetFlagValues(%v) = %v, want %s", tc.vals, err, tc.want)
		}
	}

	// A clash with pi's flag or another extension's is a load error
	// naming both.
	h2, _ := run12Host(t, extensions.Options{ReservedFlags: []string{"who"}})
	if _, err := h2.Load(context.Background(), extensions.Spec{Path: guest}); err == nil || !strings.Contains(err.Error(), "flag --who of extension run12 clashes with pi's flag --who") {
		t.Errorf("clash with pi: %v", err)
	}
	// ... or with another extension's.
	peer := goGuest(t, "extensions/testdata/guests/run12peer")
	h3, _ := run12Host(t, extensions.Options{})
	load(t, h3, extensions.Spec{Path: guest})
	if _, err := h3.Load(context.Background(), extensions.Spec{Path: peer, Config: map[string]any{"flag": "loud"}}); err == nil || !strings.Contains(err.Error(), "flag --loud of extension run12peer clashes with flag --loud of extension run12 ("+guest+")") {
		t.Errorf("clash between extensions: %v", err)
	}
}

func TestRun12Timers(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	h, wl := run12Host(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: guest})

	// A one-shot timer fires once.
	id := call12(t, h, "timer", `{"ms":10}`, false)
	wl.Wait(t, "timer "+id+" fire 1")

	// A repeating timer fires again and again until cleared.
	rid := call12(t, h, "timer", `{"ms":10,"repeat":true}`, false)
	wl.Wait(t, "timer "+rid+" fire 3")
	call12(t, h, "cleartimer", `{"id":"`+rid+`"}`, false)
	if got := call12(t, h, "cleartimer", `{"id":"`+rid+`"}`, true); !strings.Contains(got, `timer.clear: no timer "`+rid+`"`) {
		t.Errorf("clear twice: %s", got)
	}

	// Too often: under 10 ms is refused.
	if got := call12(t, h, "timer", `{"ms":1}`, true); !strings.Contains(got, "timer.set: ms must be at least 10, got 1") {
		t.Errorf("1 ms: %s", got)
	}
	// A slow repeating timer skips fires while its last runs, and says so.
	sid := call12(t, h, "timer", `{"ms":10,"repeat":true,"slowMs":60}`, false)
	wl.Wait(t, "timer fires are skipped while its last fire runs", "timer="+sid)
	call12(t, h, "cleartimer", `{"id":"`+sid+`"}`, false)

	// At most 32 timers.
	for i := 0; i < extensions.MaxTimers; i++ {
		call12(t, h, "timer", `{"ms":3600000}`, false)
	}
	if got := call12(t, h, "timer", `{"ms":3600000}`, true); !strings.Contains(got, "already has 32 timers, the most it may have") {
		t.Errorf("33rd timer: %s", got)
	}
	wl.Wait(t, "timer.set refused: too many timers")
}

func TestRun12Watches(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	granted := filepath.Join(root, "granted")
	outside := filepath.Join(root, "outside")
	os.MkdirAll(filepath.Join(granted, "sub"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.Symlink(outside, filepath.Join(granted, "link"))
	h, wl := run12Host(t, extensions.Options{ProjectRoot: root, Cwd: root})
	load(t, h, extensions.Spec{Path: guest, Grants: extensions.Grants{FS: []string{"ro:granted"}}})

	id := call12(t, h, "watch", `{"path":"granted","recursive":true}`, false)
	os.WriteFile(filepath.Join(granted, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(granted, "sub", "b.txt"), []byte("b"), 0o644)
	l := wl.Wait(t, "watch "+id+":", filepath.Join(granted, "sub", "b.txt"))
	if !strings.Contains(wl.String(), filepath.Join(granted, "a.txt")) {
		t.Errorf("a.txt not reported: %s", l)
	}
	// A folder made later is followed too.
	os.Mkdir(filepath.Join(granted, "new"), 0o755)
	wl.Wait(t, "watch "+id+":", filepath.Join(granted, "new"))
	os.WriteFile(filepath.Join(granted, "new", "c.txt"), []byte("c"), 0o644)
	wl.Wait(t, "watch "+id+":", filepath.Join(granted, "new", "c.txt"))

	// Outside the grants, directly or through a symlink: refused, logged.
	outsideMsg := "permission denied: extension run12 may not watch " + outside + " (grants.fs: ro:" + granted + ")"
	if got := call12(t, h, "watch", `{"path":"`+outside+`"}`, true); !strings.HasSuffix(got, outsideMsg) {
		t.Errorf("outside: %s", got)
	}
	viaLink := "permission denied: extension run12 may not watch granted/link (really " + outside + ") (grants.fs: ro:" + granted + ")"
	if got := call12(t, h, "watch", `{"path":"granted/link"}`, true); !strings.HasSuffix(got, viaLink) {
		t.Errorf("via symlink: %s", got)
	}
	wl.Wait(t, "watch.add refused: path outside the fs grants")
	// A change outside (the symlink's target) is never reported.
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644)
	os.WriteFile(filepath.Join(granted, "marker.txt"), []byte("m"), 0o644)
	wl.Wait(t, "watch "+id+":", "marker.txt")
	if strings.Contains(wl.String(), "secret.txt") {
		t.Errorf("a change outside the grant was reported:\n%s", wl.String())
	}

	// A watched folder moved out of the grant is no longer followed.
	if err := os.Rename(filepath.Join(granted, "new"), filepath.Join(outside, "moved")); err != nil {
		t.Fatal(err)
	}
	wl.Wait(t, "watch "+id+":", filepath.Join(granted, "new"))
	os.WriteFile(filepath.Join(outside, "moved", "after.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(granted, "marker2.txt"), []byte("m"), 0o644)
	wl.Wait(t, "watch "+id+":", "marker2.txt")
	if strings.Contains(wl.String(), "after.txt") {
		t.Errorf("a change in a folder moved out of the grant was reported:\n%s", wl.String())
	}

	call12(t, h, "unwatch", `{"id":"`+id+`"}`, false)
	// At most 16 watches.
	for i := 0; i < extensions.MaxWatches; i++ {
		call12(t, h, "watch", `{"path":"granted"}`, false)
	}
	if got := call12(t, h, "watch", `{"path":"granted"}`, true); !strings.Contains(got, "already has 16 watches") {
		t.Errorf("17th watch: %s", got)
	}
}

func TestRun12Bus(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	peer := goGuest(t, "extensions/testdata/guests/run12peer")
	h, wl := run12Host(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: guest})
	load(t, h, extensions.Spec{Path: peer})

	call12(t, h, "emit", `{"channel":"news","text":"hello","times":3}`, false)
	wl.Wait(t, "ext.run12peer", "bus news from run12: hello 2")
	// In order.
	log := wl.String()
	if i0, i1, i2 := strings.Index(log, "hello 0"), strings.Index(log, "hello 1"), strings.Index(log, "hello 2"); !(i0 < i1 && i1 < i2) {
		t.Errorf("out of order:\n%s", log)
	}
	call12(t, h, "peeremit", `{"channel":"news","text":"back"}`, false)
	wl.Wait(t, "ext.run12:", "bus news from run12peer: back 0")
	// Never to the sender.
	if wl.Count("ext.run12:", "from run12:") > 0 || wl.Count("ext.run12peer", "from run12peer") > 0 {
		t.Errorf("a message reached its sender:\n%s", wl.String())
	}
	// Oversized and bad channels are refused.
	if got := call12(t, h, "emit", `{"channel":"news","text":"big","pad":262144}`, true); !strings.Contains(got, "over the 256 KiB limit") {
		t.Errorf("oversized: %s", got)
	}
	if got := call12(t, h, "emit", `{"channel":"News!","text":"x"}`, true); !strings.Contains(got, `bus.emit: channel "News!" must match [a-z0-9:._-]{1,64}`) {
		t.Errorf("bad channel: %s", got)
	}
	wl.Wait(t, "bus.emit refused: data too large")
}

func TestRun12BusFlood(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	peer := goGuest(t, "extensions/testdata/guests/run12peer")
	h, wl := run12Host(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: guest})
	load(t, h, extensions.Spec{Path: peer, Config: map[string]any{"slowMs": 20}})
	// 1000 messages at once to a receiver that takes 20 ms each: its
	// queue fills, the rest are dropped with a warning, and the sender
	// is never held up.
	call12(t, h, "emit", `{"channel":"news","text":"flood","times":1000}`, false)
	wl.Wait(t, "bus: messages dropped: the extension's queue is full", "from=run12")
	wl.Wait(t, "ext.run12peer", "bus news from run12: flood 0")
	// The peer still answers its own calls between deliveries.
	call12(t, h, "peeremit", `{"channel":"news","text":"alive"}`, false)
	wl.Wait(t, "ext.run12:", "from run12peer: alive")
}

func TestRun12NoControls(t *testing.T) {
	guest := goGuest(t, "extensions/testdata/guests/run12")
	h, _ := run12Host(t, extensions.Options{Mode: extensions.ModeTool})
	load(t, h, extensions.Spec{Path: guest})
	for name, want := range map[string]string{
		"tools":    "tools.list: not available in mode tool",
		"complete": "llm.complete: not available in mode tool",
		"shutdown": "pi.shutdown: not available in mode tool",
	} {
		in := `{}`
		if name == "complete" {
			in = `{"prompt":"x"}`
		}
		if got := call12(t, h, name, in, true); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	var info extensions.Info
	for _, e := range h.Extensions() {
		info = e.Info()
	}
	b, _ := json.Marshal(info.Channels)
	if string(b) != `["news"]` {
		t.Errorf("channels: %s", b)
	}
}
