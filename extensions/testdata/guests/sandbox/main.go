//go:build wasip1

// Command sandbox is a test guest for the extension host, written against
// ABI v1 directly with the standard library only (no SDK), so the host's
// tests do not depend on the SDK. Its tools poke at the sandbox: files, env,
// exec, clocks, sleeping, emitting, misusing host imports, panicking.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o sandbox.wasm .
package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unsafe"
)

func main() {}

// pinned keeps buffers handed to the host alive (Go's GC does not move
// objects, so their addresses stay valid while they are referenced).
var pinned = map[uint32][]byte{}

//go:wasmexport pi_abi_v1
func piABIv1() {}

//go:wasmexport pi_alloc
func piAlloc(size uint32) uint32 {
	b := make([]byte, max(size, 1))
	p := uint32(uintptr(unsafe.Pointer(&b[0])))
	pinned[p] = b
	return p
}

//go:wasmexport pi_free
func piFree(ptr, size uint32) { delete(pinned, ptr) }

//go:wasmexport pi_call
func piCall(ptr, size uint32) uint64 {
	req := pinned[ptr][:size]
	resp := handle(req)
	p := piAlloc(uint32(len(resp)))
	copy(pinned[p], resp)
	return uint64(p)<<32 | uint64(len(resp))
}

//go:wasmimport pi log
func piLog(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport pi emit
func piEmit(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport pi host_call
func piHostCall(req unsafe.Pointer, reqLen uint32, out unsafe.Pointer, outCap uint32) int64

//go:wasmimport pi host_take
func piHostTake(out unsafe.Pointer, outCap uint32) int64

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func logf(level int32, format string, args ...any) {
	b := []byte(fmt.Sprintf(format, args...))
	piLog(level, bytesPtr(b), uint32(len(b)))
}

// hostCall sends an envelope; a small first buffer exercises host_take.
func hostCall(method string, params any) (json.RawMessage, error) {
	req, _ := json.Marshal(map[string]any{"method": method, "params": params})
	out := make([]byte, 16)
	n := piHostCall(bytesPtr(req), uint32(len(req)), bytesPtr(out), uint32(len(out)))
	if n < 0 {
		return nil, fmt.Errorf("host_call returned %d", n)
	}
	if n > int64(len(out)) {
		out = make([]byte, n)
		if m := piHostTake(bytesPtr(out), uint32(len(out))); m != n {
			return nil, fmt.Errorf("host_take returned %d, want %d", m, n)
		}
	}
	var resp struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out[:n], &resp); err != nil {
		return nil, err
	}
	if !resp.OK {
		return nil, fmt.Errorf("%s", resp.Error.Message)
	}
	return resp.Result, nil
}

type request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type execute struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Cwd        string          `json:"cwd"`
}

var initParams json.RawMessage

func ok(result any) []byte {
	b, _ := json.Marshal(map[string]any{"ok": true, "result": result})
	return b
}

func fail(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"ok": false, "error": map[string]string{"message": msg}})
	return b
}

func text(s string, isError bool) []byte {
	return ok(map[string]any{"content": []map[string]string{{"type": "text", "text": s}}, "isError": isError})
}

var toolNames = []string{"fs", "read", "write", "list", "env", "exec", "sleep", "echo", "emit", "misuse", "clock", "panic", "init_params", "gopanic", "garbage", "spam", "wrongshape"}

func handle(b []byte) []byte {
	var req request
	if err := json.Unmarshal(b, &req); err != nil {
		return fail("bad request: " + err.Error())
	}
	switch req.Method {
	case "init":
		initParams = append(json.RawMessage(nil), req.Params...)
		var tools []map[string]any
		for _, n := range toolNames {
			tools = append(tools, map[string]any{
				"name": n, "description": "sandbox probe " + n,
				"parameters": map[string]any{"type": "object"},
			})
		}
		// With config {"echo_tool_call": true} it declares a tool_call hook
		// that blocks every call with the params it was sent as the reason;
		// with {"name": "x"} it is named x (to load it twice in one host).
		var cfg struct {
			Config struct {
				EchoToolCall bool   `json:"echo_tool_call"`
				Name         string `json:"name"`
			} `json:"config"`
		}
		_ = json.Unmarshal(req.Params, &cfg)
		hooks := []string{}
		if cfg.Config.EchoToolCall {
			hooks = append(hooks, "tool_call")
		}
		name := "sandbox"
		if cfg.Config.Name != "" {
			name = cfg.Config.Name
		}
		return ok(map[string]any{
			"name": name, "version": "0.1.0", "description": "probes the sandbox",
			"tools": tools, "hooks": hooks,
			"wants": map[string]any{"fs": []string{"ro:."}, "exec": []string{"echo"}, "env": []string{"HOME"}},
		})
	case "tool.execute":
		var ex execute
		if err := json.Unmarshal(req.Params, &ex); err != nil {
			return fail("bad params: " + err.Error())
		}
		return tool(ex)
	case "hook.tool_call":
		return ok(map[string]any{"block": true, "reason": string(req.Params)})
	}
	return fail("unknown method " + req.Method)
}

func tool(ex execute) []byte {
	var in struct {
		Path string   `json:"path"`
		Text string   `json:"text"`
		Name string   `json:"name"`
		Argv []string `json:"argv"`
		Cwd  string   `json:"cwd"`
		MS   int      `json:"ms"`
		N    int      `json:"n"`
	}
	_ = json.Unmarshal(ex.Input, &in)
	switch ex.ToolName {
	case "fs":
		var op fsOp
		_ = json.Unmarshal(ex.Input, &op)
		out, err := op.run()
		if err != nil {
			return text(err.Error(), true)
		}
		return text(out, false)
	case "read":
		b, err := os.ReadFile(in.Path)
		if err != nil {
			return text(err.Error(), true)
		}
		return text(string(b), false)
	case "write":
		if err := os.WriteFile(in.Path, []byte(in.Text), 0o644); err != nil {
			return text(err.Error(), true)
		}
		return text("written", false)
	case "list":
		ents, err := os.ReadDir(in.Path)
		if err != nil {
			return text(err.Error(), true)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return text(strings.Join(names, "\n"), false)
	case "env":
		v, set := os.LookupEnv(in.Name)
		return text(fmt.Sprintf("set=%v value=%q environ=%d", set, v, len(os.Environ())), false)
	case "exec":
		params := map[string]any{"argv": in.Argv}
		if in.MS > 0 {
			params["timeoutMs"] = in.MS
		}
		if in.Cwd != "" {
			params["cwd"] = in.Cwd
		}
		res, err := hostCall("exec", params)
		if err != nil {
			return text(err.Error(), true)
		}
		return text(string(res), false)
	case "sleep":
		start := time.Now()
		time.Sleep(time.Duration(in.MS) * time.Millisecond)
		return text(fmt.Sprintf("slept %s", time.Since(start).Round(time.Millisecond)), false)
	case "echo":
		return text(string(ex.Input), false)
	case "emit":
		sent := 0
		for i := 0; i < in.N; i++ {
			p, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": fmt.Sprint("tick ", i)}}})
			if r := piEmit(bytesPtr(p), uint32(len(p))); r != 0 {
				return text(fmt.Sprintf("emit returned %d after %d", r, sent), false)
			}
			sent++
			if in.MS > 0 {
				time.Sleep(time.Duration(in.MS) * time.Millisecond)
			}
		}
		return text(fmt.Sprintf("emitted %d", sent), false)
	case "misuse":
		var codes []string
		out := make([]byte, 8)
		codes = append(codes, fmt.Sprint("take-nothing=", piHostTake(bytesPtr(out), 8)))
		codes = append(codes, fmt.Sprint("call-oob=", piHostCall(unsafe.Pointer(uintptr(0xfffffff0)), 64, bytesPtr(out), 8)))
		bad := []byte(`{"content": 5}`)
		codes = append(codes, fmt.Sprint("emit-bad=", piEmit(bytesPtr(bad), uint32(len(bad)))))
		codes = append(codes, fmt.Sprint("emit-oob=", piEmit(unsafe.Pointer(uintptr(0xfffffff0)), 64)))
		req := []byte(`{"method":"exec","params":{"argv":["echo","0123456789012345678901234567890123456789"]}}`)
		n := piHostCall(bytesPtr(req), uint32(len(req)), bytesPtr(out), 8)
		codes = append(codes, fmt.Sprint("take-small=", piHostTake(bytesPtr(out), 8)))
		big := make([]byte, n)
		codes = append(codes, fmt.Sprint("take-ok=", piHostTake(bytesPtr(big), uint32(n)) == n))
		_, err := hostCall("nosuch", map[string]any{})
		codes = append(codes, fmt.Sprint("unknown-method=", err))
		return text(strings.Join(codes, "\n"), false)
	case "clock":
		var r [16]byte
		rand.Read(r[:])
		return text(fmt.Sprintf("year=%d random=%x", time.Now().Year(), r), false)
	case "panic":
		logf(3, "about to panic")
		panic("guest panic on purpose")
	case "init_params":
		return text(string(initParams), false)
	case "gopanic":
		// A panic in another goroutine: the call traps, and only stderr
		// says why.
		done := make(chan struct{})
		go func() {
			defer close(done)
			var m map[string]int
			m["x"]++ // assignment to entry in nil map
		}()
		<-done
		return text("unreachable", false)
	case "garbage":
		// A malformed answer of N bytes (not JSON).
		return []byte(strings.Repeat("<garbage>", max(in.N, 1)))
	case "wrongshape":
		// Well-formed JSON, but a result of the wrong shape.
		return ok(map[string]any{"content": 5})
	case "spam":
		// N lines on stderr and N through pi.log, each of text (or "line").
		line := in.Text
		if line == "" {
			line = "line"
		}
		for i := 0; i < in.N; i++ {
			fmt.Fprintf(os.Stderr, "stderr %d %s\n", i, line)
			logf(2, "log %d %s", i, line)
		}
		return text(fmt.Sprintf("spammed %d", in.N), false)
	}
	return fail("unknown tool " + ex.ToolName)
}

// fsOp is one file operation of the "fs" tool, through Go's os package as
// any Go guest would do it. Path2 is the second name of rename and link and
// the target of symlink.
type fsOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Path2 string `json:"path2"`
	Text  string `json:"text"`
}

func (o fsOp) run() (string, error) {
	switch o.Op {
	case "read":
		b, err := os.ReadFile(o.Path)
		return string(b), err
	case "write":
		return "written", os.WriteFile(o.Path, []byte(o.Text), 0o644)
	case "create_excl":
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(o.Text)
		f.Close()
		return "created", err
	case "append":
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(o.Text)
		f.Close()
		return "appended", err
	case "rw_open":
		// Open for read and write without truncating, write at the start.
		f, err := os.OpenFile(o.Path, os.O_RDWR, 0)
		if err != nil {
			return "", err
		}
		_, err = f.WriteAt([]byte(o.Text), 0)
		f.Close()
		return "overwritten", err
	case "stat", "lstat":
		st := os.Stat
		if o.Op == "lstat" {
			st = os.Lstat
		}
		fi, err := st(o.Path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("name=%s size=%d mode=%s", fi.Name(), fi.Size(), fi.Mode()), nil
	case "readdir":
		ents, err := os.ReadDir(o.Path)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return strings.Join(names, ","), err
	case "readdir_rewind":
		// List, rewind, list again: the second listing must be whole.
		f, err := os.Open(o.Path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		a, err := f.Readdirnames(-1)
		if err != nil {
			return "", err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		b, err := f.Readdirnames(-1)
		return fmt.Sprintf("first=%d second=%d", len(a), len(b)), err
	case "rename":
		return "renamed", os.Rename(o.Path, o.Path2)
	case "link":
		return "linked", os.Link(o.Path, o.Path2)
	case "symlink":
		return "symlinked", os.Symlink(o.Path2, o.Path)
	case "readlink":
		return os.Readlink(o.Path)
	case "remove":
		return "removed", os.Remove(o.Path)
	case "mkdir":
		return "made", os.Mkdir(o.Path, 0o755)
	case "mkdirall":
		return "made", os.MkdirAll(o.Path, 0o755)
	case "chmod":
		return "chmodded", os.Chmod(o.Path, 0o600)
	case "chtimes":
		t := time.Unix(1_000_000_000, 0)
		return "touched", os.Chtimes(o.Path, t, t)
	case "truncate":
		return "truncated", os.Truncate(o.Path, 0)
	case "getwd":
		return os.Getwd()
	case "loop":
		// Open the same file many times, reporting any content that is not
		// Text (the host swaps a folder for a link meanwhile).
		seen := map[string]int{}
		for i := 0; i < 2000; i++ {
			b, err := os.ReadFile(o.Path)
			if err != nil {
				seen["error "+errorKind(err)]++
				continue
			}
			seen[string(b)]++
		}
		var keys []string
		for k, n := range seen {
			keys = append(keys, fmt.Sprintf("%s=%d", k, n))
		}
		sort.Strings(keys)
		return strings.Join(keys, ";"), nil
	}
	return "", fmt.Errorf("unknown op %q", o.Op)
}

// errorKind is the last part of an error message (the errno's text).
func errorKind(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
