package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
)

// cachedTool is what the cache keeps of one tool of a server's list: what
// a ToolDefinition is made of.
type cachedTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// cacheEntry is one server's tool list as last listed.
type cacheEntry struct {
	Server  string       `json:"server"`
	Version string       `json:"version,omitempty"`
	SavedAt time.Time    `json:"savedAt"`
	Tools   []cachedTool `json:"tools"`
}

// maxCacheBytes bounds a cache file that is read back.
const maxCacheBytes = 16 << 20

// cacheKey is the digest of everything that decides what a server lists:
// its command or URL, its environment and headers as written (before ${VAR}
// expansion, so no secret is hashed into a file name), and the directory
// it runs in. The allowlists are applied after the cache and are not in it.
func cacheKey(s Server, cwd string) string {
	b, _ := json.Marshal(struct {
		Command []string          `json:"command"`
		URL     string            `json:"url"`
		Env     map[string]string `json:"env"`
		Headers map[string]string `json:"headers"`
		Cwd     string            `json:"cwd"`
	}{s.Command, s.URL, s.Env, s.Headers, cwd})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cachePath is the cache file of a server: DIR/mcp/NAME-KEY16.json.
func cachePath(dir, name, key string) string {
	return filepath.Join(dir, "mcp", name+"-"+key[:16]+".json")
}

// readCache reads a cache file; a missing file is (nil, nil).
func readCache(path string) (*cacheEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxCacheBytes {
		return nil, fmt.Errorf("%s is not a regular file under %d bytes", path, maxCacheBytes)
	}
	var e cacheEntry
	if err := json.NewDecoder(f).Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &e, nil
}

// writeCache replaces a cache file atomically.
func writeCache(path string, e *cacheEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o600)
}
