package abi

// This file declares the version of ABI 1.1 and the init facts it adds;
// its other additions are in prompthooks.go, commands.go, events.go and
// hostmethods.go (docs/abi.md, "ABI 1.1"). Every addition is optional for
// a guest: the host sends nothing of it to a guest that did not ask for it,
// and a guest sends its 1.1 result fields only when InitParams.ABIMinor >= 1.

// Minor is the ABI's minor version, sent as InitParams.ABIMinor.
const Minor = 2

// Modes are the values of InitParams.Mode.
const (
	ModeInteractive = "interactive"
	ModePrint       = "print"
	ModeJSON        = "json"
	ModeRPC         = "rpc"
	ModeTool        = "tool"
	ModeInspect     = "inspect"
)
