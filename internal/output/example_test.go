package output_test

import (
	"fmt"

	"github.com/pi-go/pi/internal/output"
)

func ExampleFormatSize() {
	fmt.Println(output.FormatSize(123), output.FormatSize(51200), output.FormatSize(1258291))
	// Output: 123B 50.0KB 1.2MB
}

func ExampleTruncateHead() {
	t := output.TruncateHead("one\ntwo\nthree\nfour", 2, output.DefaultMaxBytes)
	fmt.Printf("%q by %s, %d of %d lines\n", t.Content, t.TruncatedBy, t.OutputLines, t.TotalLines)
	// Output: "one\ntwo" by lines, 2 of 4 lines
}

func ExampleTruncateTail() {
	t := output.TruncateTail("build ok\ntest ok\nFAIL: x", 10, 16)
	fmt.Printf("%q by %s\n", t.Content, t.TruncatedBy)
	// Output: "test ok\nFAIL: x" by bytes
}
