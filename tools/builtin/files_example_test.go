package builtin_test

import (
	"fmt"

	"github.com/pi-go/pi/tools/builtin"
)

func ExampleFormatSize() {
	fmt.Println(builtin.FormatSize(123), builtin.FormatSize(51200), builtin.FormatSize(1258291))
	// Output: 123B 50.0KB 1.2MB
}

func ExampleTruncateHead() {
	t := builtin.TruncateHead("one\ntwo\nthree\nfour", 2, builtin.DefaultMaxBytes)
	fmt.Printf("%q by %s, %d of %d lines\n", t.Content, t.TruncatedBy, t.OutputLines, t.TotalLines)
	// Output: "one\ntwo" by lines, 2 of 4 lines
}

func ExampleTruncateTail() {
	t := builtin.TruncateTail("build ok\ntest ok\nFAIL: x", 10, 16)
	fmt.Printf("%q by %s\n", t.Content, t.TruncatedBy)
	// Output: "test ok\nFAIL: x" by bytes
}
