package main

import "io"

func cmdExt(args []string, stdout, stderr io.Writer) int               { return exitUsage }
func cmdTrust(args []string, stdout, stderr io.Writer, trust bool) int { return exitUsage }
func cmdDemo(args []string, stdout, stderr io.Writer) int              { return exitUsage }
func cmdAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return exitUsage
}
