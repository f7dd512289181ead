//go:build wasip1

// Command a is the conv12 test guest (package guest) as the extension
// "conv12".
package main

import "github.com/pi-go/pi/extensions/testdata/guests/conv12/guest"

func main() {}

func init() { guest.Register("conv12") }
