// Package extspec owns the rules of an extension entry: what pi.toml's
// [[extensions]], `pi ext install` and the extension host accept as an
// extension's name, the names of the tools it declares, its grants (fs,
// exec, env, and since ABI 1.1 http and tools) and its limits (memory_mb,
// timeout_ms, kv_mb). The config decoder, the
// CLI and the host all call this package, so they cannot disagree about
// what a valid entry is.
//
// The grammar of exec patterns lives in runtime/execgrant (its matcher is
// used at run time by the host too); this package calls it and adds no
// second rule. extspec depends on the standard library and execgrant only.
package extspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/execgrant"
)

// ValidName reports whether s is an extension name: [a-z][a-z0-9_-]*.
func ValidName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NamePattern spells the extension-name rule for messages.
const NamePattern = "[a-z][a-z0-9_-]*"

// CheckName is ValidName with an error that says what a name must be.
func CheckName(s string) error {
	if !ValidName(s) {
		return fmt.Errorf("%q is not an extension name (want %s)", s, NamePattern)
	}
	return nil
}

// MaxToolNameLen is the longest tool name (the OpenAI API's limit for
// function names).
const MaxToolNameLen = 64

// ValidToolName reports whether s is a tool name: 1 to 64 of
// A-Z a-z 0-9 _ - (the rule for function names in the OpenAI API). It is
// the rule for the tools an extension declares and for tools.active.
func ValidToolName(s string) bool {
	if s == "" || len(s) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckToolName is ValidToolName with an error that says what a tool name
// must be.
func CheckToolName(s string) error {
	if !ValidToolName(s) {
		return fmt.Errorf("%q is not a tool name (want 1 to %d of A-Z a-z 0-9 _ -)", s, MaxToolNameLen)
	}
	return nil
}

// ValidCommandName reports whether s is a slash command's name (without
// the slash): [a-z][a-z0-9-]*. It is the rule for the commands an
// extension declares and for what a typed "/name args" line names. (The
// Go SDK checks the same rule on the guest side, where no host package
// can be imported.)
func ValidCommandName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ValidEnvName reports whether s is an environment variable name as pi
// accepts one anywhere (grants.env, model.api_key_env,
// tools.bash.pass_env): [A-Za-z_][A-Za-z0-9_]*.
func ValidEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// CheckEnvName is ValidEnvName with an error naming the value.
func CheckEnvName(s string) error {
	if !ValidEnvName(s) {
		return fmt.Errorf("%q is not an environment variable name", s)
	}
	return nil
}

// CheckSHA256 checks a module digest as pi.toml records it: 64 hex digits
// (either case; pi writes lowercase).
func CheckSHA256(s string) error {
	ok := len(s) == 64
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	if !ok {
		return fmt.Errorf("must be 64 hex digits, got %q", s)
	}
	return nil
}

// Grants is what an extension may reach outside its sandbox; deny by
// default. It is the one grants type: runtime/config decodes it from
// pi.toml, the extension host enforces it, and its JSON form is the one
// `init` receives and `pi ext list --json` prints.
type Grants struct {
	// FS entries are "ro:PATH" or "rw:PATH", PATH relative to the project
	// root (or absolute); each names a directory, mounted at its real
	// absolute path. See ParseFSGrant and ResolveFSGrant.
	FS []string `json:"fs"`
	// Exec entries are command patterns (runtime/execgrant's grammar).
	Exec []string `json:"exec"`
	// Env entries are names of environment variables the extension may read.
	Env []string `json:"env"`
	// HTTP entries are URL patterns the http.request host method may fetch
	// (ABI 1.1): "https://api.example.com/v1/*". See ParseHTTPGrant.
	HTTP []string `json:"http,omitempty"`
	// Tools are names of tools the tool.call host method may run (ABI
	// 1.1).
	Tools []string `json:"tools,omitempty"`
	// LLM allows the llm.complete host method (ABI 1.2), within
	// Limits.LLMTokens.
	LLM bool `json:"llm,omitempty"`
	// Model allows model.set, model.setThinkingLevel and replacing the
	// provider request in before_provider_request (ABI 1.2).
	Model bool `json:"model,omitempty"`
}

// Grant kinds, as `pi ext install --grant KIND=VALUE` names them.
const (
	KindFS   = "fs"
	KindExec = "exec"
	KindEnv  = "env"
	// KindHTTP and KindTools are the pi.toml keys of the ABI 1.1 grants.
	KindHTTP  = "http"
	KindTools = "tools"
	// KindTool is how `--grant tool=NAME` names a tools grant.
	KindTool = "tool"
	// KindLLM and KindModel are the boolean grants of ABI 1.2
	// (`--grant llm=true`, `--grant model=true`).
	KindLLM   = "llm"
	KindModel = "model"
)

// CheckGrant checks one grant of the given kind by that kind's rule: fs by
// CheckFSGrant (the syntax; where it points is ResolveFSGrant's business),
// exec by runtime/execgrant, env by CheckEnvName, http by CheckHTTPGrant,
// tools (or tool) by CheckToolName.
func CheckGrant(kind, value string) error {
	switch kind {
	case KindFS:
		return CheckFSGrant(value)
	case KindExec:
		return execgrant.Validate(value)
	case KindEnv:
		return CheckEnvName(value)
	case KindHTTP:
		return CheckHTTPGrant(value)
	case KindTools, KindTool:
		return CheckToolName(value)
	case KindLLM, KindModel:
		return checkBoolGrant(kind, value)
	}
	return fmt.Errorf("unknown grant kind %q (fs, exec, env, http, tool, llm or model)", kind)
}

// Kinds lists the grant kinds with their lists in g, in the order pi.toml
// writes them: fs, exec, env, http, tools.
func (g Grants) Kinds() []struct {
	Kind string
	List []string
} {
	return []struct {
		Kind string
		List []string
	}{{KindFS, g.FS}, {KindExec, g.Exec}, {KindEnv, g.Env}, {KindHTTP, g.HTTP}, {KindTools, g.Tools}}
}

// Empty reports whether g grants nothing.
func (g Grants) Empty() bool {
	return len(g.FS)+len(g.Exec)+len(g.Env)+len(g.HTTP)+len(g.Tools) == 0 && !g.LLM && !g.Model
}

// Check checks every entry of g with CheckGrant; the error names the first
// bad entry as "grants.KIND[i]".
func (g Grants) Check() error {
	for _, k := range g.Kinds() {
		for i, v := range k.List {
			if err := CheckGrant(k.Kind, v); err != nil {
				return fmt.Errorf("grants.%s[%d]: %w", k.Kind, i, err)
			}
		}
	}
	return nil
}

// AddFlag parses one grant as `pi ext install --grant` takes it,
// KIND=VALUE (fs=ro:., exec=git status*, env=HOME,
// http=https://api.example.com/v1/*, tool=read), checks VALUE by its
// kind's rule and appends it to g.
//
// # Errors
//
// A flag without "=" or with an empty VALUE, an unknown KIND, and a VALUE
// its kind's rule refuses; g is unchanged then.
func (g *Grants) AddFlag(kv string) error {
	kind, value, ok := strings.Cut(kv, "=")
	if !ok || value == "" {
		return errors.New("want KIND=VALUE, e.g. fs=ro:. or exec=git")
	}
	if err := CheckGrant(kind, value); err != nil {
		return err
	}
	switch kind {
	case KindFS:
		g.FS = append(g.FS, value)
	case KindExec:
		g.Exec = append(g.Exec, value)
	case KindEnv:
		g.Env = append(g.Env, value)
	case KindHTTP:
		g.HTTP = append(g.HTTP, value)
	case KindTool, KindTools:
		g.Tools = append(g.Tools, value)
	case KindLLM:
		g.LLM = value == "true"
	case KindModel:
		g.Model = value == "true"
	}
	return nil
}

// Bounds and defaults of Limits.
const (
	// DefaultMemoryMB is the memory limit when Limits.MemoryMB is 0.
	DefaultMemoryMB = 64
	// MaxMemoryMB is the largest memory limit: a wasm32 memory is at most
	// 4 GiB (65536 pages of 64 KiB).
	MaxMemoryMB = 4096
	// DefaultKVMB is the kv quota per extension and scope when
	// Limits.KVMB is 0.
	DefaultKVMB = 4
	// MaxKVMB is the largest kv quota.
	MaxKVMB = 1024
	// DefaultTimeoutMS bounds one tool.execute call when Limits.TimeoutMS
	// is 0.
	DefaultTimeoutMS = 30_000
	// MaxTimeoutMS is the longest time limit: one day.
	MaxTimeoutMS = 86_400_000
	// DefaultLLMTokens is the llm.complete token quota per extension and
	// process when Limits.LLMTokens is 0 (ABI 1.2).
	DefaultLLMTokens = 200_000
	// MaxLLMTokens is the largest llm.complete quota.
	MaxLLMTokens = 1_000_000_000
)

// Limits cap an extension. A zero field takes its default; pi.toml leaves
// the key out for that (writing 0 there is an error).
type Limits struct {
	// MemoryMB caps the guest's linear memory, in MiB: 1..MaxMemoryMB,
	// default DefaultMemoryMB.
	MemoryMB int `json:"memoryMB,omitempty"`
	// TimeoutMS bounds each tool.execute call, in ms: 1..MaxTimeoutMS,
	// default DefaultTimeoutMS. init, hooks and events have their own
	// fixed bound.
	TimeoutMS int `json:"timeoutMS,omitempty"`
	// KVMB caps each of the extension's kv stores (one per scope), in
	// MiB: 1..MaxKVMB, default DefaultKVMB (ABI 1.1).
	KVMB int `json:"kvMB,omitempty"`
	// LLMTokens caps the tokens (input + output) the extension's
	// llm.complete calls spend in one process: 1..MaxLLMTokens, default
	// DefaultLLMTokens (ABI 1.2).
	LLMTokens int `json:"llmTokens,omitempty"`
}

// CheckLLMTokens checks an llm_tokens value as written: 1..MaxLLMTokens.
func CheckLLMTokens(n int64) error { return checkRange(n, MaxLLMTokens, "tokens") }

// LLMTokenQuota is the llm.complete quota in tokens, the default for 0.
func (l Limits) LLMTokenQuota() int64 {
	if l.LLMTokens == 0 {
		return DefaultLLMTokens
	}
	return int64(l.LLMTokens)
}

// CheckKVMB checks a kv_mb value as written: 1..MaxKVMB.
func CheckKVMB(n int64) error { return checkRange(n, MaxKVMB, "MiB") }

// KVBytes is the kv quota in bytes, the default for 0. Call it on checked
// Limits.
func (l Limits) KVBytes() int64 {
	mb := l.KVMB
	if mb == 0 {
		mb = DefaultKVMB
	}
	return int64(mb) << 20
}

// CheckMemoryMB checks a memory_mb value as written: 1..MaxMemoryMB.
func CheckMemoryMB(n int64) error { return checkRange(n, MaxMemoryMB, "MiB") }

// CheckTimeoutMS checks a timeout_ms value as written: 1..MaxTimeoutMS.
func CheckTimeoutMS(n int64) error { return checkRange(n, MaxTimeoutMS, "ms") }

func checkRange(n, upper int64, unit string) error {
	if n <= 0 {
		return fmt.Errorf("must be positive, got %d (leave it out for the default)", n)
	}
	if n > upper {
		return fmt.Errorf("must be at most %d %s, got %d", upper, unit, n)
	}
	return nil
}

// Check checks every set (non-zero) field with CheckMemoryMB,
// CheckTimeoutMS and CheckKVMB; the error names the field as
// "limits.memory_mb", "limits.timeout_ms" or "limits.kv_mb".
func (l Limits) Check() error {
	if l.MemoryMB != 0 {
		if err := CheckMemoryMB(int64(l.MemoryMB)); err != nil {
			return fmt.Errorf("limits.memory_mb %w", err)
		}
	}
	if l.TimeoutMS != 0 {
		if err := CheckTimeoutMS(int64(l.TimeoutMS)); err != nil {
			return fmt.Errorf("limits.timeout_ms %w", err)
		}
	}
	if l.KVMB != 0 {
		if err := CheckKVMB(int64(l.KVMB)); err != nil {
			return fmt.Errorf("limits.kv_mb %w", err)
		}
	}
	if l.LLMTokens != 0 {
		if err := CheckLLMTokens(int64(l.LLMTokens)); err != nil {
			return fmt.Errorf("limits.llm_tokens %w", err)
		}
	}
	return nil
}

// MemoryPages is the memory limit in 64 KiB wasm pages, the default for 0.
// Call it on checked Limits.
func (l Limits) MemoryPages() uint32 {
	mb := l.MemoryMB
	if mb == 0 {
		mb = DefaultMemoryMB
	}
	return uint32(mb) * 16 // 16 pages of 64 KiB per MiB
}

// ExecuteTimeout is the time limit of one tool.execute call, the default
// for 0. Call it on checked Limits.
func (l Limits) ExecuteTimeout() time.Duration {
	if l.TimeoutMS == 0 {
		return DefaultTimeoutMS * time.Millisecond
	}
	return time.Duration(l.TimeoutMS) * time.Millisecond
}

// checkBoolGrant checks the value of a boolean grant as `--grant
// llm=true` gives it: true or false.
func checkBoolGrant(kind, value string) error {
	if value != "true" && value != "false" {
		return fmt.Errorf("grant %s must be true or false, got %q", kind, value)
	}
	return nil
}
