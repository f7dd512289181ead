// Package archtest checks the dependency rules of docs/design.md with
// `go list -deps`: nothing imports cmd/pi; tools/builtin imports of pi's
// packages only runtime/tool, runtime/redact and the internal packages it
// shares with no one above it; those internal packages import no tool,
// loop, provider or extension code; runtime/redact is a leaf; internal/abi
// imports the standard library only; sdk imports no host package but
// internal/abi; only extensions imports wazero; runtime/extspec (the rules
// of an extension entry) needs nothing but the standard library and
// runtime/execgrant; runtime/session imports of pi's packages only
// runtime/llm, runtime/content, internal/atomicfile and the standard-library
// leaves internal/jsonscan and internal/plural (runtime/compaction imports
// it, not the other way); only runtime/mcp imports the MCP SDK; only
// internal/atomicfile replaces files by renaming; cmd/pi links no package
// whose init is too dear for start-up (glamour, chroma, bluemonday);
// santhosh-tekuri/jsonschema is linked into no program (internal/jsonschema
// validates, the library is the tests' oracle). Written, and skipped until
// the conversation refactor lands: cmd/pi imports none of extensions,
// tools/builtin, runtime/config, runtime/permission, runtime/extspec and
// runtime/execgrant directly.
package archtest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pi-go/pi"

// deps returns the packages pattern depends on (itself included), for the
// given GOOS/GOARCH (empty: the host's).
func deps(t *testing.T, goos, goarch string, pattern ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, pattern...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	if goos != "" {
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH="+goarch)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", pattern, err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

// TestAssemblyRules: the runtime is assembled in one place. cmd/pi (flags
// and dispatch) and its front ends (cmd/pi/internal/...) reach the
// configuration, the permission rules, the extension host and the
// built-in tools only through runtime/app, runtime/conversation and
// runtime/manage, and nothing that runtime/app assembles imports it back.
func TestAssemblyRules(t *testing.T) {
	forbidden := []string{"runtime/config", "runtime/permission", "runtime/extspec", "runtime/execgrant", "extensions", "tools/builtin"}
	for pkg, imports := range deps(t, "", "", "./cmd/pi/...") {
		if pkg != module+"/cmd/pi" && !strings.HasPrefix(pkg, module+"/cmd/pi/internal/") {
			continue
		}
		for _, imp := range imports {
			for _, f := range forbidden {
				if imp == module+"/"+f {
					t.Errorf("%s imports %s; front ends go through runtime/app, runtime/conversation and runtime/manage", pkg, imp)
				}
			}
		}
	}
	for pkg, imports := range deps(t, "", "", "./runtime/...", "./extensions/...", "./tools/...", "./internal/...") {
		if !strings.HasPrefix(pkg, module) || strings.HasPrefix(pkg, module+"/runtime/app") || strings.HasPrefix(pkg, module+"/internal/archtest") ||
			pkg == module+"/runtime/conversation" { // the conversation stands on the assembly

			continue
		}
		if slices.Contains(imports, module+"/runtime/app") {
			t.Errorf("%s imports runtime/app; only the conversation, front ends and embedders may", pkg)
		}
	}
	// The wire is spoken by the host and the SDK only; everyone else sees
	// runtime/tool values.
	for pkg, imports := range deps(t, "", "", "./...") {
		if strings.HasPrefix(pkg, module) && slices.Contains(imports, module+"/internal/abi") &&
			!strings.HasPrefix(pkg, module+"/extensions") && !strings.HasPrefix(pkg, module+"/sdk") {
			t.Errorf("%s imports internal/abi; only extensions and sdk speak the wire", pkg)
		}
	}
}

// cmdPiMayNotImport are the packages cmd/pi must not import directly
// (docs/design-card.md, the package table): it reaches the extension host,
// the built-in tools, pi.toml, the permission policy and the grant rules
// through runtime/app and the conversation package.
var cmdPiMayNotImport = []string{
	"/extensions", "/tools/builtin", "/runtime/config", "/runtime/permission",
	"/runtime/extspec", "/runtime/execgrant",
}

// TestCmdPiDirectImports: cmd/pi's own imports (not its tests', not
// transitive ones) include none of cmdPiMayNotImport. Once enabled it
// covers the cmd/pi loop of TestAssemblyRules, which can then go.
func TestCmdPiDirectImports(t *testing.T) {
	t.Skip("enabled by the conversation refactor")
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./cmd/pi")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./cmd/pi: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module) && slices.Contains(cmdPiMayNotImport, strings.TrimPrefix(imp, module)) {
			t.Errorf("cmd/pi imports %s; it must go through runtime/app (or the conversation package)", imp)
		}
	}
}

// toolInternals are the internal packages the built-in tools share (and
// that tools/builtin may import).
var toolInternals = []string{
	"/internal/atomicfile", "/internal/cgroup", "/internal/fileutil", "/internal/gitignore",
	"/internal/imageutil", "/internal/output", "/internal/procs", "/internal/sandbox",
	"/internal/plural", // a leaf on the standard library (cgroup's errors count)
}

func TestDependencyRules(t *testing.T) {
	all := deps(t, "", "", "./...")
	for pkg, imports := range all {
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		for _, imp := range imports {
			if imp == module+"/cmd/pi" {
				t.Errorf("%s imports cmd/pi; nothing may", pkg)
			}
			if strings.HasPrefix(imp, "github.com/tetratelabs/wazero") && !strings.HasPrefix(pkg, module+"/extensions") {
				t.Errorf("%s imports %s; only extensions/ may import wazero", pkg, imp)
			}
			if strings.HasPrefix(imp, "github.com/modelcontextprotocol/go-sdk") && !strings.HasPrefix(pkg, module+"/runtime/mcp") {
				t.Errorf("%s imports %s; only runtime/mcp (and its test server) may import the MCP SDK", pkg, imp)
			}
			if strings.HasPrefix(imp, "github.com/nats-io/") && pkg != module+"/runtime/fleet" {
				t.Errorf("%s imports %s; only runtime/fleet may import nats", pkg, imp)
			}
		}
	}
	// internal/jsonschema comes with runtime/tool (its validator), a leaf
	// like runtime/content.
	builtinMay := append([]string{"/tools/builtin", "/runtime/tool", "/runtime/redact", "/runtime/content", "/internal/jsonschema"}, toolInternals...)
	for pkg := range deps(t, "", "", "./tools/builtin/...") {
		if strings.HasPrefix(pkg, module) && !slices.Contains(builtinMay, strings.TrimPrefix(pkg, module)) {
			t.Errorf("tools/builtin depends on %s; of pi's packages it may import runtime/tool, runtime/redact and %s only", pkg, strings.Join(toolInternals, ", "))
		}
	}
	for _, p := range toolInternals {
		for pkg := range deps(t, "", "", "."+p) {
			for _, banned := range []string{"/tools/", "/runtime/agent", "/runtime/llm", "/runtime/app", "/extensions"} {
				if strings.HasPrefix(pkg, module+banned) {
					t.Errorf("%s depends on %s; the tools' internal packages import no tool, loop, provider, runtime or extension code", p[1:], pkg)
				}
			}
		}
	}
	for pkg := range deps(t, "", "", "./runtime/llm") {
		// pi's validator and the library it replaced (whose init compiled
		// meta-schemas); the Anthropic SDK's invopop/jsonschema (schema
		// generation, no work at init) is not one of them.
		if strings.HasPrefix(pkg, module+"/runtime/tool") || strings.HasPrefix(pkg, module+"/internal/jsonschema") || strings.Contains(pkg, "santhosh-tekuri/jsonschema") {
			t.Errorf("runtime/llm depends on %s; content blocks come from the leaf runtime/content", pkg)
		}
	}
	for pkg := range deps(t, "", "", "./runtime/content") {
		if strings.HasPrefix(pkg, module) && pkg != module+"/runtime/content" {
			t.Errorf("runtime/content depends on %s; it is a leaf (standard library only)", pkg)
		}
	}
	for pkg := range deps(t, "", "", "./runtime/extspec") {
		if strings.HasPrefix(pkg, module) && pkg != module+"/runtime/extspec" && pkg != module+"/runtime/execgrant" {
			t.Errorf("runtime/extspec depends on %s; it holds the entry rules with the standard library and runtime/execgrant only", pkg)
		}
		if !strings.HasPrefix(pkg, module) && strings.Contains(strings.Split(pkg, "/")[0], ".") {
			t.Errorf("runtime/extspec depends on %s; it may use the standard library only", pkg)
		}
	}
	for _, goos := range [][2]string{{"", ""}, {"wasip1", "wasm"}} {
		for pkg := range deps(t, goos[0], goos[1], "./internal/abi") {
			if pkg != module+"/internal/abi" && strings.Contains(strings.SplitN(pkg, "/", 2)[0], ".") {
				t.Errorf("internal/abi depends on %s (GOOS=%s); it is the wire format shared by host and guest and imports the standard library only", pkg, goos[0])
			}
		}
	}
	// Sessions are storage: compaction (which decides what to cut and has
	// the model summarize) imports runtime/session, never the other way.
	sessionMay := []string{"/runtime/session", "/runtime/llm", "/runtime/content", "/runtime/redact", "/internal/atomicfile", "/internal/jsonscan", "/internal/plural"}
	for pkg := range deps(t, "", "", "./runtime/session") {
		if strings.HasPrefix(pkg, module) && !slices.Contains(sessionMay, strings.TrimPrefix(pkg, module)) {
			t.Errorf("runtime/session depends on %s; of pi's packages it may import runtime/llm, runtime/content, internal/atomicfile, internal/jsonscan and internal/plural only", pkg)
		}
	}
	for pkg := range deps(t, "", "", "./runtime/redact") {
		if strings.HasPrefix(pkg, module) && pkg != module+"/runtime/redact" {
			t.Errorf("runtime/redact depends on %s; it is a leaf (standard library only)", pkg)
		}
	}
	for pkg := range deps(t, "wasip1", "wasm", "./sdk/...") {
		if strings.HasPrefix(pkg, module) && !strings.HasPrefix(pkg, module+"/sdk") && pkg != module+"/internal/abi" {
			t.Errorf("sdk depends on host package %s; of pi's packages it may import internal/abi only", pkg)
		}
		if !strings.HasPrefix(pkg, module) && strings.Contains(pkg, ".") {
			t.Errorf("sdk depends on %s; it may use the standard library only", pkg)
		}
	}
}

// startupHeavy are module paths whose package init is too dear for a
// program that starts for every tool call: glamour brought chroma (its
// lexers and styles, some 20 ms of init), bluemonday and gorilla/css
// (some 4 ms more) into every `pi version`; the TUI renders markdown
// with goldmark's core parser instead (cmd/pi/internal/tui/markdown.go,
// docs/design.md).
var startupHeavy = []string{
	"github.com/alecthomas/chroma",
	"github.com/charmbracelet/glamour",
	"github.com/microcosm-cc/bluemonday",
	"github.com/gorilla/css",
	"github.com/yuin/goldmark/extension",
}

// TestStartupDeps: the pi binary links none of startupHeavy, since a
// linked package's init runs at every start whether it is used or not.
func TestStartupDeps(t *testing.T) {
	for pkg := range deps(t, "", "", "./cmd/pi") {
		for _, heavy := range startupHeavy {
			if pkg == heavy || strings.HasPrefix(pkg, heavy+"/") {
				t.Errorf("cmd/pi depends on %s: its package init slows every start of pi (see startupHeavy)", pkg)
			}
		}
	}
}

// TestOneAtomicWriter: every file pi replaces (tool writes, pi.toml,
// trust.json, installed modules) goes through internal/atomicfile, which
// keeps symlinks, modes and owners; a second rename-over writer would not.
// Folders are moved by atomicfile.MoveDir, which never replaces one.
func TestOneAtomicWriter(t *testing.T) {
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if filepath.ToSlash(filepath.Dir(p)) == "../../internal/atomicfile" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "os.Rename(") {
			t.Errorf("%s calls os.Rename: replace files with atomicfile.WriteFile (internal/atomicfile), the one atomic writer", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoVendorSDKInPi: the model vendors' SDKs (Anthropic's, OpenAI's
// openai-go) are the oracles of runtime/llm's tests, never linked into a
// program: each registers every type of its API at init, 10 to 12 MB of
// the binary, for the few members of the stream events pi reads.
func TestNoVendorSDKInPi(t *testing.T) {
	for pkg := range deps(t, "", "", "./cmd/pi", "./runtime/...", "./extensions/...", "./tools/...", "./examples/embed") {
		if strings.HasPrefix(pkg, "github.com/anthropics/anthropic-sdk-go") || strings.HasPrefix(pkg, "github.com/openai/openai-go") {
			t.Errorf("%s is linked into pi (go list -deps ./cmd/pi ./runtime/... ...); decode into runtime/llm's own event types, keep the SDK to _test.go files", pkg)
		}
	}
}

// TestNoSchemaLibraryInPi: the pi binary (and every package a program or
// embedder links) validates JSON Schema with internal/jsonschema; the
// santhosh-tekuri library compiles five meta-schemas in its package init
// (6.7 ms of every start), so it may appear only in tests, as the oracle.
// The same holds for internal/jsonschema itself: a leaf on the standard
// library and golang.org/x/text.
func TestNoSchemaLibraryInPi(t *testing.T) {
	const lib = "github.com/santhosh-tekuri/jsonschema"
	for pkg := range deps(t, "", "", "./cmd/pi", "./runtime/...", "./extensions/...", "./tools/...", "./examples/embed") {
		if strings.HasPrefix(pkg, lib) {
			t.Errorf("%s is linked into pi (go list -deps ./cmd/pi ./runtime/... ...); use internal/jsonschema, keep the library to _test.go files", pkg)
		}
	}
	for pkg, imports := range deps(t, "", "", "./internal/jsonschema") {
		if pkg != module+"/internal/jsonschema" {
			continue
		}
		for _, imp := range imports {
			if strings.Contains(imp, ".") && !strings.HasPrefix(imp, "golang.org/x/text/") {
				t.Errorf("internal/jsonschema imports %s; it must stay a leaf (standard library and golang.org/x/text)", imp)
			}
		}
	}
}

// TestPiDoesNotLinkNATS: pi's binary links no NATS package: pi fleet is
// pi's fleet build (cmd/pi with -tags fleet), which pi hands `pi fleet`
// over to (cmd/pi/fleetexec.go). Linked into every pi, NATS made the
// binary 46 MB instead of 31 and `pi version` pass the start-up guard
// (docs/performance.md).
func TestPiDoesNotLinkNATS(t *testing.T) {
	for pkg := range deps(t, "", "", "./cmd/pi") {
		if strings.HasPrefix(pkg, "github.com/nats-io/") || pkg == module+"/runtime/fleet" {
			t.Errorf("cmd/pi depends on %s; only its fleet build (-tags fleet) may", pkg)
		}
	}
}
