//go:build !wasip1

package sdk

import (
	"errors"
	"fmt"
	"os"
)

// Outside wasip1 there is no host: logs go to standard error, emits report
// "not cancelled", and host calls fail. This keeps the package buildable and
// its dispatch testable on the build machine.

var errNoHost = errors.New("not running inside a pi host (build with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared)")

var levelNames = [...]string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}

func hostLog(level Level, msg string) {
	name := "LEVEL" + fmt.Sprint(int(level))
	if level >= 0 && int(level) < len(levelNames) {
		name = levelNames[level]
	}
	fmt.Fprintf(os.Stderr, "[%s] %s\n", name, msg)
}

func hostEmit([]byte) bool { return false }

func hostCall([]byte) ([]byte, error) { return nil, errNoHost }
