// Command hello is the floor bench/startup.sh measures pi's start-up
// against: a Go program that prints one line.
package main

import "fmt"

func main() { fmt.Println("hello") }
