// Package testserver is a small MCP server built with the official SDK for
// pi's tests: tools with text, image, resource, structured, error, slow and
// large results, one that crashes the server on demand, one that starts a
// child process, and one that adds a tool (tools/list_changed). The
// environment steers it (see the Env constants). cmd/mcp-testserver serves
// it over stdio; tests of the HTTP transport serve it in process.
package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables the server reads.
const (
	// EnvFailStart makes the server write its value to stderr and exit 2
	// before it answers anything.
	EnvFailStart = "MCPTEST_FAIL_START"
	// EnvMarkerDir is where the server writes server-pid when it starts,
	// slow writes started-ID when its call starts and cancelled-ID when it
	// is cancelled, and spawn writes child-pid.
	EnvMarkerDir = "MCPTEST_MARKER_DIR"
	// EnvHostileSchema adds a tool whose schema points at a file.
	EnvHostileSchema = "MCPTEST_HOSTILE_SCHEMA"
	// EnvStderr is written to stderr, line by line, at start.
	EnvStderr = "MCPTEST_STDERR"
)

var object = json.RawMessage(`{"type":"object"}`)

func schema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, req))
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func args[T any](req *sdk.CallToolRequest) (T, error) {
	var v T
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &v); err != nil {
			return v, err
		}
	}
	return v, nil
}

// PNG is the 2x1 image the image tool returns.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	img.Set(1, 0, color.RGBA{0, 0, 255, 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// New returns the server with its tools.
func New() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcp-testserver", Version: "1.0.0"}, nil)
	markers := os.Getenv(EnvMarkerDir)
	s.AddTool(&sdk.Tool{Name: "echo", Title: "Echo", Description: "Echoes its text. Useful for tests.", InputSchema: schema(`"text":{"type":"string"}`, "text")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := args[struct{ Text string }](req)
			if err != nil {
				return nil, err
			}
			return text("echo: " + a.Text), nil
		})
	s.AddTool(&sdk.Tool{Name: "image", Description: "Returns a 2x1 PNG image.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "an image:"}, &sdk.ImageContent{Data: PNG(), MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails (isError).", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("it failed on purpose")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured", Description: "Returns structured content.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text(`{"answer":42}`)
			r.StructuredContent = map[string]any{"answer": 42}
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured_only", Description: "Returns structured content and no content.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"only": true}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "resource", Description: "Returns resources.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///pic.png", MIMEType: "image/png", Blob: PNG()}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///data.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 3}}},
				&sdk.ResourceLink{URI: "file:///elsewhere.txt", Name: "elsewhere", Description: "Another file. More words."},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "slow", Description: "Waits ms milliseconds; when cancelled it writes a marker.", InputSchema: schema(`"ms":{"type":"integer"},"id":{"type":"string"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := args[struct {
				MS int
				ID string
			}](req)
			if err != nil {
				return nil, err
			}
			if markers != "" {
				os.WriteFile(filepath.Join(markers, "started-"+a.ID), nil, 0o644)
			}
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return text("slept"), nil
			case <-ctx.Done():
				if markers != "" {
					os.WriteFile(filepath.Join(markers, "cancelled-"+a.ID), []byte(context.Cause(ctx).Error()), 0o644)
				}
				return nil, ctx.Err()
			}
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Crashes the server.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "mcp-testserver: about to crash")
			fmt.Fprintln(os.Stderr, "mcp-testserver: crashing on demand")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "big", Description: "Returns lines lines of width characters, or one line of oneline bytes.", InputSchema: schema(`"lines":{"type":"integer"},"width":{"type":"integer"},"oneline":{"type":"integer"},"blocks":{"type":"integer"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := args[struct{ Lines, Width, Oneline, Blocks int }](req)
			if err != nil {
				return nil, err
			}
			var body string
			if a.Oneline > 0 {
				body = strings.Repeat("x", a.Oneline)
			} else {
				var b strings.Builder
				for i := 1; i <= a.Lines; i++ {
					line := fmt.Sprintf("line %d ", i)
					b.WriteString(line + strings.Repeat("y", max(0, a.Width-len(line))) + "\n")
				}
				body = strings.TrimSuffix(b.String(), "\n")
			}
			r := text(body)
			for i := 1; i < a.Blocks; i++ {
				r.Content = append(r.Content, &sdk.TextContent{Text: fmt.Sprintf("block %d", i+1)})
			}
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "env", Description: "Returns an environment variable.", InputSchema: schema(`"name":{"type":"string"}`, "name")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := args[struct{ Name string }](req)
			if err != nil {
				return nil, err
			}
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				v = "(unset)"
			}
			return text(v), nil
		})
	s.AddTool(&sdk.Tool{Name: "spawn", Description: "Starts a child process that sleeps, in the server's process group; returns its pid.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			pid := fmt.Sprint(cmd.Process.Pid)
			if markers != "" {
				os.WriteFile(filepath.Join(markers, "child-pid"), []byte(pid), 0o644)
			}
			return text(pid), nil
		})
	s.AddTool(&sdk.Tool{Name: "add_tool", Description: "Adds a tool named name that answers added.", InputSchema: schema(`"name":{"type":"string"}`, "name")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, err := args[struct{ Name string }](req)
			if err != nil {
				return nil, err
			}
			s.AddTool(&sdk.Tool{Name: a.Name, Description: "Added at run time.", InputSchema: object},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("added"), nil })
			return text("added " + a.Name), nil
		})
	s.AddTool(&sdk.Tool{Name: "dotted.name/x", Description: "A name with characters tool names cannot have.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("dotted"), nil })
	if os.Getenv(EnvHostileSchema) != "" {
		s.AddTool(&sdk.Tool{Name: "hostile", Description: "Its schema points at a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///dev/zero"}}}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("hostile"), nil })
	}
	return s
}
