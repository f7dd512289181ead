package sdk_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// A tool with typed input: the JSON Schema comes from the struct. In an
// extension this is the body of func init().
func ExampleTool() {
	type input struct {
		Text  string `json:"text" description:"The text to count"`
		Words bool   `json:"words,omitempty" description:"Count words instead of characters"`
	}
	sdk.Extension("counter", "0.1.0", "Counts characters or words")
	sdk.Tool(sdk.ToolSpec{
		Name:        "count",
		Description: "Count the characters (or words) of a text.",
	}, func(ctx *sdk.Context, in input) (sdk.Result, error) {
		n := len([]rune(in.Text))
		if in.Words {
			n = len(strings.Fields(in.Text))
		}
		return sdk.Text(fmt.Sprint(n)), nil
	})
}

// A tool_call hook with configuration checked at load.
func ExampleOnToolCall() {
	var deny []*regexp.Regexp
	sdk.Extension("no-sudo", "0.1.0", "Blocks sudo")
	sdk.OnInit(func() error {
		cfg := struct {
			Patterns []string `json:"patterns"`
		}{Patterns: []string{`\bsudo\b`}}
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		for _, p := range cfg.Patterns {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("config patterns: %q: %w", p, err)
			}
			deny = append(deny, re)
		}
		return nil
	})
	sdk.OnToolCall(func(c sdk.ToolCall) sdk.ToolCallDecision {
		if c.ToolName != "bash" {
			return sdk.ToolCallDecision{}
		}
		var in struct {
			Command string `json:"command"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return sdk.ToolCallDecision{}
		}
		for _, re := range deny {
			if re.MatchString(in.Command) {
				return sdk.Deny(fmt.Sprintf("Blocked by no-sudo: the command matches %q. Ask the user to run it.", re))
			}
		}
		return sdk.ToolCallDecision{}
	})
}

// A bash_spawn hook that adds one variable.
func ExampleOnBashSpawn() {
	sdk.Extension("ci-env", "0.1.0", "Sets CI=1 for bash")
	sdk.OnBashSpawn(func(s sdk.BashSpawn) sdk.BashSpawn {
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env["CI"] = "1"
		return s
	})
}

// Progress updates from a long tool, stopping when the call is cancelled.
func ExampleContext_Emit() {
	sdk.Tool(sdk.ToolSpec{Name: "slow", Description: "Work in steps"}, func(ctx *sdk.Context, in struct{}) (sdk.Result, error) {
		for step := 1; step <= 10; step++ {
			if ctx.Emit(sdk.Text(fmt.Sprintf("step %d of 10", step))) {
				return sdk.ErrorText("cancelled"), nil
			}
			// ... one step of work ...
		}
		return sdk.Text("done"), nil
	})
}
