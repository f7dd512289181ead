// Command mcp-testserver serves pi's MCP test server over stdio.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-go/pi/runtime/mcp/internal/testserver"
)

func main() {
	if msg := os.Getenv(testserver.EnvFailStart); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(2)
	}
	if lines := os.Getenv(testserver.EnvStderr); lines != "" {
		for _, l := range strings.Split(lines, ";") {
			fmt.Fprintln(os.Stderr, l)
		}
	}
	if dir := os.Getenv(testserver.EnvMarkerDir); dir != "" {
		os.WriteFile(filepath.Join(dir, "server-pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err := testserver.New().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-testserver:", err)
		os.Exit(1)
	}
}
