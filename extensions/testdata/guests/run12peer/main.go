//go:build wasip1

// Command run12peer is the second test guest of ABI 1.2's bus: it takes
// the channel "news" (slowly, when its config says slowMs) and emits on
// it with its tool "emit".
package main

import (
	"encoding/json"
	"time"

	"github.com/pi-go/pi/sdk"
)

func main() {}

type emitIn struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

func init() {
	sdk.Extension("run12peer", "1.0.0", "ABI 1.2 bus test peer")
	var cfg struct {
		SlowMS int    `json:"slowMs"`
		Flag   string `json:"flag"` // a flag to declare (to test clashes)
	}
	sdk.OnInit(func() error {
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		if cfg.Flag != "" {
			sdk.Flag(sdk.FlagSpec{Name: cfg.Flag, Description: "a clashing flag", Boolean: true})
		}
		return nil
	})
	sdk.OnBus("news", func(m sdk.BusMessage) {
		var d struct {
			Text string `json:"text"`
			N    int    `json:"n"`
		}
		_ = json.Unmarshal(m.Data, &d)
		sdk.Logf(sdk.LevelInfo, "bus %s from %s: %s %d", m.Channel, m.From, d.Text, d.N)
		if cfg.SlowMS > 0 {
			end := time.Now().Add(time.Duration(cfg.SlowMS) * time.Millisecond)
			for time.Now().Before(end) {
			}
		}
	})
	sdk.Tool(sdk.ToolSpec{Name: "peeremit", Description: "Emits on the bus."}, func(_ *sdk.Context, in emitIn) (sdk.Result, error) {
		return sdk.Text("emitted"), sdk.BusEmit(in.Channel, map[string]any{"text": in.Text})
	})
}
