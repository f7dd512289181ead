//go:build wasip1

// Command context is a pi extension (ABI 1.1) with two prompt hooks: a
// before_agent_start hook that adds the project's brief (a file it reads
// under an fs grant, BRIEF.md by default) to the system prompt of every
// prompt's run, and an input hook that refuses prompts holding a secret
// (an API key, a private key) before they reach the model. It needs the
// grant fs = ["ro:."] (or a grant of the brief's folder).
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/pi-go/pi/sdk"
)

// config is the [extensions.config] table.
type config struct {
	// Brief is the brief's file, relative to the project root (default
	// BRIEF.md).
	Brief string `json:"brief,omitempty" description:"the brief's file, relative to the project root"`
	// MaxBytes caps how much of the brief is added (default 8000).
	MaxBytes int `json:"max_bytes,omitempty" description:"how much of the brief is added, in bytes"`
	// Secrets are more regular expressions (RE2) of secrets to refuse.
	Secrets []string `json:"secrets,omitempty" description:"more patterns of secrets to refuse"`
}

// secretPatterns are what the input hook refuses by default.
var secretPatterns = []string{
	`sk-[A-Za-z0-9_-]{20,}`,                        // OpenAI-style API keys
	`AKIA[0-9A-Z]{16}`,                             // AWS access key ids
	`gh[pousr]_[A-Za-z0-9]{36,}`,                   // GitHub tokens
	`xox[baprs]-[A-Za-z0-9-]{10,}`,                 // Slack tokens
	`-----BEGIN [A-Z ]*PRIVATE KEY-----`,           // private keys
	`(?i)(password|passwd|secret)\s*[:=]\s*\S{8,}`, // password = ...
}

var (
	cfg     config
	secrets []*regexp.Regexp
)

func init() {
	sdk.Extension("context", "1.0.0", "Adds the project brief to every prompt and refuses prompts that hold a secret")
	sdk.Wants(sdk.Grants{FS: []string{"ro:."}})
	sdk.ConfigSchema(config{})
	sdk.OnInit(setup)
	sdk.OnBeforeAgentStart(addBrief)
	sdk.OnInput(refuseSecrets)
}

func main() {}

func setup() error {
	cfg = config{Brief: "BRIEF.md", MaxBytes: 8000}
	if err := sdk.Config(&cfg); err != nil {
		return err
	}
	secrets = nil
	for i, p := range append(append([]string(nil), secretPatterns...), cfg.Secrets...) {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("config secrets[%d] %q: %w", i-len(secretPatterns), p, err)
		}
		secrets = append(secrets, re)
	}
	return nil
}

// addBrief appends the brief to the system prompt. The project root is
// mounted at its real path, so the guest reads the same path the host
// names.
func addBrief(b sdk.BeforeAgentStart) sdk.AgentStartChange {
	root := sdk.ProjectRoot()
	if root == "" {
		root = sdk.Cwd()
	}
	path := filepath.Join(root, cfg.Brief)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sdk.AgentStartChange{}
	case err != nil:
		sdk.Logf(sdk.LevelWarn, "context: cannot read the brief %s: %v (grant fs = [\"ro:.\"])", path, err)
		return sdk.AgentStartChange{}
	}
	if len(data) > cfg.MaxBytes {
		data = append(data[:cfg.MaxBytes], "\n[the brief is cut here]"...)
	}
	return sdk.AgentStartChange{AppendSystemPrompt: "# Project brief (" + cfg.Brief + ")\n\n" + string(data)}
}

// refuseSecrets keeps a prompt that holds a secret from the model.
func refuseSecrets(in sdk.Input) sdk.InputAction {
	for _, re := range secrets {
		if re.MatchString(in.Text) {
			return sdk.InputHandled(fmt.Sprintf("context: the prompt was not sent: it holds what looks like a secret (it matches %s). Remove it and send the prompt again.", re.String()))
		}
	}
	return sdk.InputAction{}
}
