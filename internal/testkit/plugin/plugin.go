// Package plugin owns what the example extensions' tests share: building
// an example into a .wasm file once per test binary (with the Go toolchain
// for wasip1, or wat2wasm for WebAssembly text) and loading it into the real
// extension host, with its tools wrapped and its hooks ready for the tool
// pipeline. It is imported only by tests.
package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/waitbuf"
	"github.com/pi-go/pi/runtime/tool"
)

var (
	mu     sync.Mutex
	tmpDir string
	built  = map[string]string{}
)

// Main runs the tests and removes the built modules: call it from TestMain
// as os.Exit(plugin.Main(m)).
func Main(m *testing.M) int {
	if d, err := CacheDir(); err == nil {
		os.Setenv("PI_CACHE_DIR", d)
	}
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
	return code
}

func outDir(t testing.TB) string {
	if tmpDir == "" {
		d, err := os.MkdirTemp("", "pi-testkit-plugin-")
		if err != nil {
			t.Fatalf("make build folder: %v", err)
		}
		tmpDir = d
	}
	return tmpDir
}

// cacheDir is the compilation cache the hosts of the tests share: CacheDir.
func cacheDir(t testing.TB) string {
	d, err := CacheDir()
	if err != nil {
		t.Fatalf("test compilation cache: %v", err)
	}
	return d
}

// CacheDir is the wazero compilation cache every test of the module shares,
// across test binaries and runs: compiling a Go guest with wazero built
// under -race takes a minute or more on a busy machine, and each test binary
// would otherwise compile the same guests again. It lives under the user's
// cache directory (pi-go/test-wazero-cache). wazero keys entries by module
// hash, wazero version and settings, so a stale entry is never used, and
// the tests are just as correct with an empty cache. Main also exports it
// as PI_CACHE_DIR, so pi runs started by the tests (in process or as
// programs) use it too.
func CacheDir() (string, error) { return testCache("test-wazero-cache") }

// testCache is the folder name under pi-go in the user's cache folder (the
// temporary folder without one), made when missing.
func testCache(name string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	d := filepath.Join(base, "pi-go", name)
	return d, os.MkdirAll(d, 0o755)
}

// ModuleRoot returns the folder of the module's go.mod, found from the test's
// working directory upwards.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// BuildGo builds the Go example in pkgDir (a folder, relative to the
// module root, such as "examples/plugins/loc") with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, once per test
// binary, and returns the .wasm path.
func BuildGo(t testing.TB, pkgDir string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkgDir]; ok {
		return p
	}
	if _, err := os.Stat(filepath.Join(ModuleRoot(t), pkgDir)); err != nil {
		t.Fatalf("guest %s is missing: %v (pass a folder relative to the module root)", pkgDir, err)
	}
	out := filepath.Join(outDir(t), filepath.Base(pkgDir)+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./"+filepath.ToSlash(pkgDir))
	cmd.Dir = ModuleRoot(t)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s for wasip1: %v\n%s", pkgDir, err, b)
	}
	built[pkgDir] = out
	return out
}

// PiEnv names the pi binary a test run shares: scripts/test builds ./cmd/pi
// once, before `go test ./...`, and exports its path under this name, so
// the twenty-odd test binaries that run pi as a program do not each link
// their own 40 MB copy. Only a script that has just built the binary
// should set it: Pi trusts it to be the code under test.
const PiEnv = "PI_TEST_PI"

// Pi returns the real pi binary (./cmd/pi, for the host): the one named by
// $PI_TEST_PI, or else one built once per test binary (Main removes it with
// the modules).
func Pi(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	const key = "cmd/pi (host)"
	if p, ok := built[key]; ok {
		return p
	}
	if p := os.Getenv(PiEnv); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Fatalf("$%s=%s is not an executable pi (scripts/test sets it to the pi it builds; unset it to build one): %v", PiEnv, p, err)
		}
		built[key] = p
		return p
	}
	out := filepath.Join(outDir(t), "pi")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/pi")
	cmd.Dir = ModuleRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build pi: %v\n%s", err, b)
	}
	built[key] = out
	return out
}

// PiFleet returns Pi's binary with pi's fleet build (-tags fleet) next to
// it as pi-fleet, which `pi fleet` hands over to: built once per test
// binary when it is not there (scripts/test builds it beside $PI_TEST_PI).
func PiFleet(t testing.TB) string {
	t.Helper()
	pi := Pi(t)
	mu.Lock()
	defer mu.Unlock()
	const key = "cmd/pi -tags fleet (host)"
	if _, ok := built[key]; ok {
		return pi
	}
	out := filepath.Join(filepath.Dir(pi), "pi-fleet")
	if _, err := os.Stat(out); err != nil {
		cmd := exec.Command("go", "build", "-tags", "fleet", "-o", out, "./cmd/pi")
		cmd.Dir = ModuleRoot(t)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build pi-fleet: %v\n%s", err, b)
		}
	}
	built[key] = out
	return pi
}

// BuildWAT assembles a WebAssembly text file (relative to the module root)
// with wat2wasm, once per test binary, and returns the .wasm path. A missing
// wat2wasm fails the test: install the Debian package wabt (scripts/test
// does).
func BuildWAT(t testing.TB, watFile string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[watFile]; ok {
		return p
	}
	src := filepath.Join(ModuleRoot(t), watFile)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("test module %s is missing: %v (hand-written modules live in the testdata folder of the package whose tests use them, such as extensions/testdata)", watFile, err)
	}
	bin, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm is needed to assemble %s and was not found on PATH: install the Debian package wabt (apt-get install wabt; scripts/test does this)", watFile)
	}
	out := filepath.Join(outDir(t), filepath.Base(watFile)+".wasm")
	cmd := exec.Command(bin, src, "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", watFile, err, b)
	}
	built[watFile] = out
	return out
}

// Loaded is one extension loaded into its own real host, with its tools
// wrapped and the host's hooks.
type Loaded struct {
	Host  *extensions.Host
	Ext   *extensions.Extension
	Tools []tool.AgentTool
	Hooks *tool.Hooks
	Spawn []tool.SpawnHook
	Cwd   string
	logs  *waitbuf.Buffer
}

// Load loads the module at wasmPath into a new host whose project root and
// working directory are root. The spec's Path and SHA256 are filled in. The
// host is closed when the test ends.
func Load(t testing.TB, wasmPath, root string, spec extensions.Spec) *Loaded {
	t.Helper()
	ctx := context.Background()
	logs := waitbuf.New()
	logger := hclog.New(&hclog.LoggerOptions{Name: "test", Output: logs, Level: hclog.Trace})
	h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cacheDir(t), Logger: logger, ProjectRoot: root, Cwd: root, HostName: "pi-test", HostVersion: "0.0.0"})
	if err != nil {
		t.Fatalf("new host: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("close host: %v", err)
		}
	})
	sum, err := extensions.FileSHA256(wasmPath)
	if err != nil {
		t.Fatal(err)
	}
	spec.Path, spec.SHA256 = wasmPath, sum
	ext, err := h.Load(ctx, spec)
	if err != nil {
		t.Fatalf("load %s: %v\nlogs:\n%s", wasmPath, err, logs.String())
	}
	tools, err := tool.WrapAll(ext.Definitions(), func(string) tool.Context {
		return tool.Context{Cwd: root, Logger: logger}
	})
	if err != nil {
		t.Fatalf("wrap tools: %v", err)
	}
	return &Loaded{Host: h, Ext: ext, Tools: tools, Hooks: h.Hooks(), Spawn: h.SpawnHooks(), Cwd: root, logs: logs}
}

// LoadErr is Load for a spec that should fail: it returns the error.
func LoadErr(t testing.TB, wasmPath, root string, spec extensions.Spec) error {
	t.Helper()
	ctx := context.Background()
	h, err := extensions.NewHost(ctx, extensions.Options{CacheDir: cacheDir(t), ProjectRoot: root, Cwd: root})
	if err != nil {
		t.Fatalf("new host: %v", err)
	}
	defer h.Close(ctx)
	spec.Path = wasmPath
	_, err = h.Load(ctx, spec)
	if err == nil {
		t.Fatalf("load %s succeeded, want an error", wasmPath)
	}
	return err
}

// Run runs one tool call through the whole pipeline (prepare, validate,
// tool_call hooks, execute, tool_result hooks) with these tools and hooks.
func (l *Loaded) Run(t testing.TB, name string, args any) tool.Result {
	t.Helper()
	return RunWith(t, l.Tools, l.Hooks, name, args)
}

// RunWith runs one tool call through tool.Run with the given tools and hooks.
func RunWith(t testing.TB, tools []tool.AgentTool, hooks *tool.Hooks, name string, args any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), tools, hooks, name, "call-1", raw, nil)
}

// Logs returns what the host logged so far (guest logs included).
func (l *Loaded) Logs() string { return l.logs.String() }

// SpawnChain runs the spawn hooks in order, as the bash tool does.
func (l *Loaded) SpawnChain(t testing.TB, s tool.BashSpawn) (tool.BashSpawn, error) {
	t.Helper()
	for _, h := range l.Spawn {
		var err error
		if s, err = h.Func(context.Background(), s); err != nil {
			return s, fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	return s, nil
}
