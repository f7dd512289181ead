package llm

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (a stream
// not closed, a retry timer not stopped).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
