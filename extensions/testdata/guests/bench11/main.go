//go:build wasip1

// Command bench11 measures ABI 1.1's host methods from a Go guest built
// with the SDK: its tool "kvrt" sets a key and gets it back (one kv
// round trip), its tool "gols" runs the built-in ls through tool.call.
package main

import (
	"fmt"

	"github.com/pi-go/pi/sdk"
)

func init() {
	sdk.Extension("bench11", "1.0.0", "ABI 1.1 benchmarks")
	sdk.Tool(sdk.ToolSpec{Name: "kvrt", Description: "kv set then get"}, func(ctx *sdk.Context, in struct{}) (sdk.Result, error) {
		if err := sdk.ProjectKV.Set("note", "hello from Go"); err != nil {
			return sdk.Result{}, err
		}
		var got string
		if _, err := sdk.ProjectKV.Get("note", &got); err != nil {
			return sdk.Result{}, err
		}
		return sdk.Text(got), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "gols", Description: "ls through tool.call"}, func(ctx *sdk.Context, in struct{}) (sdk.Result, error) {
		r, err := sdk.CallTool("ls", map[string]any{})
		if err != nil {
			return sdk.Result{}, err
		}
		if r.IsError {
			return sdk.Result{}, fmt.Errorf("ls failed: %s", r.Text())
		}
		return sdk.Text("listed"), nil
	})
}

func main() {}
