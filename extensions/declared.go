package extensions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/extspec"
)

// The declared records: what a module's init declared (name, version,
// tools, hooks, wants), kept by its sha256 in a folder the program names
// ($PI_HOME/cache/declared in pi), for when that module is later replaced
// behind pi's back and pi must say what it declared without running the
// changed file. Installing, updating and loading a pinned module write
// them; a start that finds the pinned file changed reads them.

// declaredPath is the record of what the module with sha256 sum declared.
func declaredPath(dir, sum string) string {
	return filepath.Join(dir, strings.ToLower(sum)+".json")
}

// RecordDeclared keeps what info's module declared, by its sha256, in dir.
// Best effort: a record that cannot be written only means a later mismatch
// assumes every hook. Nothing is written for dir "" or an info without a
// valid sha256.
func RecordDeclared(dir string, info Info) {
	if dir == "" || extspec.CheckSHA256(info.SHA256) != nil {
		return
	}
	rec := Info{Name: info.Name, Version: info.Version, Tools: info.Tools, Hooks: info.Hooks, Wants: info.Wants, SHA256: strings.ToLower(info.SHA256)}
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	_ = atomicfile.WriteFile(declaredPath(dir, info.SHA256), data, 0o600)
}

// HasDeclared reports whether dir holds a record of sum (a stat).
func HasDeclared(dir, sum string) bool {
	_, err := os.Stat(declaredPath(dir, sum))
	return err == nil
}

// LoadDeclared reads the record of sum from dir; ok is false when there is
// none or it does not hold that sum's declaration. Hooks pi does not know
// are dropped.
func LoadDeclared(dir, sum string) (Info, bool) {
	if dir == "" || extspec.CheckSHA256(sum) != nil {
		return Info{}, false
	}
	data, err := os.ReadFile(declaredPath(dir, sum))
	if err != nil {
		return Info{}, false
	}
	var info Info
	if json.Unmarshal(data, &info) != nil || !strings.EqualFold(info.SHA256, sum) {
		return Info{}, false
	}
	info.Hooks = slices.DeleteFunc(info.Hooks, func(h string) bool {
		return !slices.Contains([]string{HookToolCall, HookToolResult, HookBashSpawn, HookEvent}, h)
	})
	return info, true
}
