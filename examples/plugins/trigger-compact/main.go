// Command trigger-compact compacts the session when the context passes a
// threshold, and on /trigger-compact (a port of the reference's
// trigger-compact example to ABI 1.2, in Go: the turn_end event,
// sdk.GetContextUsage and sdk.Compact).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o trigger-compact.wasm .
package main

import (
	"fmt"

	"github.com/pi-go/pi/sdk"
)

// config is [extensions.config].
type config struct {
	// ThresholdTokens: compact once the context holds more tokens.
	ThresholdTokens int `json:"threshold_tokens"`
}

var cfg = config{ThresholdTokens: 100_000}

func init() {
	sdk.Extension("trigger-compact", "0.1.0", "Compacts when the context passes a threshold")
	sdk.OnInit(func() error {
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		if cfg.ThresholdTokens < 1 {
			return fmt.Errorf("threshold_tokens must be at least 1, got %d", cfg.ThresholdTokens)
		}
		return nil
	})
	sdk.Events("turn_end")
	sdk.OnEvent(func(sdk.Event) {
		u, err := sdk.GetContextUsage()
		if err != nil {
			sdk.Logf(sdk.LevelWarn, "context usage: %v", err)
			return
		}
		if !u.Known || u.Tokens <= cfg.ThresholdTokens {
			return
		}
		trigger("", fmt.Sprintf("The context holds %d tokens (over %d): compacting", u.Tokens, cfg.ThresholdTokens))
	})
	sdk.Command(sdk.CommandSpec{Name: "trigger-compact", Description: "Trigger compaction immediately", ArgumentHint: "[instructions]"},
		func(args string) (sdk.CommandResult, error) {
			if err := sdk.Compact(args); err != nil {
				return sdk.CommandResult{}, err
			}
			return sdk.CommandResult{Text: "Compaction started"}, nil
		})
}

// trigger asks pi to compact (when it is idle) and tells the person.
func trigger(instructions, why string) {
	if err := sdk.Compact(instructions); err != nil {
		sdk.Logf(sdk.LevelWarn, "compact: %v", err)
		return
	}
	if sdk.HasUI() {
		sdk.Notify(why, "info")
	}
}

func main() {}
