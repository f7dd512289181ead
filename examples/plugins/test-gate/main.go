//go:build wasip1

// Command test-gate is a pi extension (ABI 1.1) that holds back "done"
// until the project's tests pass: when the model ends a turn without tool
// calls, its stop hook runs the test command through tool.call bash (which
// runs through every other extension's hooks and the permission rules, as
// the model's calls do) and, when the tests fail, continues the run with
// the failures. pi allows at most 3 continues per prompt, so a model that
// cannot fix the tests does not loop forever. It needs the grant
// tools = ["bash"].
package main

import (
	"fmt"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// config is the [extensions.config] table.
type config struct {
	// Command is the test command, run by bash in the project (default
	// "go test ./...").
	Command string `json:"command,omitempty" description:"the test command"`
	// MaxOutput caps the failure output sent to the model, in bytes
	// (default 4000; the end is kept).
	MaxOutput int `json:"max_output,omitempty" description:"bytes of failure output sent to the model"`
}

func init() {
	sdk.Extension("test-gate", "1.0.0", "Continues the run with the test failures until the tests pass")
	sdk.Wants(sdk.Grants{Tools: []string{"bash"}})
	// The host checks the config against this schema right after init, so
	// a wrong type fails the load with the pi.toml key in the message.
	sdk.ConfigSchema(config{})
	sdk.OnStop(gate)
}

func main() {}

// settings reads the config (its types were checked at load) with the
// defaults.
func settings() (config, error) {
	cfg := config{Command: "go test ./...", MaxOutput: 4000}
	if err := sdk.Config(&cfg); err != nil {
		return cfg, err
	}
	if strings.TrimSpace(cfg.Command) == "" {
		return cfg, fmt.Errorf("config command is empty")
	}
	if cfg.MaxOutput <= 0 {
		return cfg, fmt.Errorf("config max_output must be positive, got %d", cfg.MaxOutput)
	}
	return cfg, nil
}

func gate(s sdk.Stop) sdk.StopDecision {
	cfg, err := settings()
	if err != nil {
		sdk.Logf(sdk.LevelError, "test-gate: %v", err)
		return sdk.StopDecision{}
	}
	r, err := sdk.CallTool("bash", map[string]any{"command": cfg.Command})
	if err != nil {
		// Not granted, or the host refused: say so in the log and let the
		// run end (the gate cannot hold what it cannot run).
		sdk.Logf(sdk.LevelWarn, "test-gate: cannot run %q: %v", cfg.Command, err)
		return sdk.StopDecision{}
	}
	if !r.IsError {
		return sdk.StopDecision{}
	}
	out := r.Text()
	if len(out) > cfg.MaxOutput {
		out = "…" + out[len(out)-cfg.MaxOutput:]
	}
	return sdk.Continue(fmt.Sprintf("The tests fail (`%s`):\n\n%s\n\nFix the code so that they pass, then finish.", cfg.Command, out))
}
