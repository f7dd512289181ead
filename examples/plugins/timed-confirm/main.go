// Command timed-confirm shows dialogs that give up after a while: /timed
// asks yes or no for 5 seconds, /timed-select offers three options for 10
// seconds, and both say whether the person answered, cancelled or let the
// time run out (a port of the reference's timed-confirm example to ABI
// 1.2, in Go: dialogs with timeoutMs, whose answers carry the reason).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o timed-confirm.wasm .
package main

import (
	"time"

	"github.com/pi-go/pi/sdk"
)

func init() {
	sdk.Extension("timed-confirm", "0.1.0", "Dialogs that give up after a while")
	sdk.Command(sdk.CommandSpec{Name: "timed", Description: "Show a timed confirmation dialog (auto-cancels in 5s)"}, timed)
	sdk.Command(sdk.CommandSpec{Name: "timed-select", Description: "Show a timed select dialog (auto-cancels in 10s)"}, timedSelect)
}

func timed(string) (sdk.CommandResult, error) {
	r, err := sdk.Confirm("Timed Confirmation", "This dialog will auto-cancel in 5 seconds. Confirm?", 5*time.Second)
	if err != nil {
		return sdk.CommandResult{}, err
	}
	switch {
	case r.Confirmed:
		return sdk.CommandResult{Text: "Confirmed by user!"}, nil
	case r.Reason == "timeout":
		return sdk.CommandResult{Text: "Dialog timed out (auto-cancelled)"}, nil
	case r.Reason == "no-ui":
		return sdk.CommandResult{Text: "Nobody can answer here"}, nil
	}
	return sdk.CommandResult{Text: "Cancelled by user"}, nil
}

func timedSelect(string) (sdk.CommandResult, error) {
	r, err := sdk.Select("Pick an option", []string{"Option A", "Option B", "Option C"}, 10*time.Second)
	if err != nil {
		return sdk.CommandResult{}, err
	}
	if r.OK {
		return sdk.CommandResult{Text: "Selected: " + r.Value}, nil
	}
	if r.Reason == "timeout" {
		return sdk.CommandResult{Text: "Selection timed out"}, nil
	}
	return sdk.CommandResult{Text: "Selection cancelled (" + r.Reason + ")"}, nil
}

func main() {}
