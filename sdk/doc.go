// Package sdk owns the guest side of the pi extension ABI v1 (1.1) for extensions
// written in Go: the module exports (pi_abi_v1, pi_alloc, pi_free, pi_call),
// the JSON envelope, registration of tools and hooks, and the calls back into
// the host (log, emit, host_call/host_take). It uses the standard library
// and internal/abi only and never imports a host package.
//
// The messages themselves are declared once, in internal/abi, which the
// host shares: this package maps its public types (Result, Block, ToolCall,
// ...) to and from those messages at its edge. The JSON tags of the public
// types are for an extension's own use (logging, tests) and do not shape
// the wire.
//
// An extension is a main package built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o loc.wasm .
//
// # Register in init, not in main
//
// A c-shared wasip1 module is a reactor: the host calls its `_initialize`
// export once, which runs the Go runtime's start-up and every package's init
// functions, and main.main is never called. Register everything in a
// func init() and keep an empty func main() (the compiler needs one):
//
//	func init() {
//		sdk.Extension("hello", "0.1.0", "Says hello")
//		sdk.Tool(sdk.ToolSpec{Name: "hello", Description: "Greets someone"},
//			func(ctx *sdk.Context, in struct{ Name string `json:"name"` }) (sdk.Result, error) {
//				return sdk.Text("Hello, " + in.Name + "!"), nil
//			})
//	}
//
//	func main() {}
//
// Registration mistakes (a tool registered twice, a schema that is not JSON,
// no sdk.Extension call) cannot be reported from init; they are kept and
// returned as the answer to the host's `init` request, so loading the
// extension fails with a message that names them.
//
// # Handlers
//
// Calls into one instance are serialized by the host, so handlers need no
// locking. A handler that panics answers the host with {"ok": false} and the
// panic message; the instance keeps running. Configuration, the working
// directory and the grants are known once the host has sent `init`: read them
// with Config, Cwd and Granted inside handlers or in an OnInit function.
//
// # ABI 1.1
//
// A pi that speaks ABI 1.1 (ABIMinor() >= 1) also offers: a kv store per
// project and a global one (ProjectKV, GlobalKV), HTTP under grants.http,
// CallTool under grants.tools, Notify and Confirm, slash commands
// (Command), the input, before_agent_start and stop hooks (OnInput,
// OnBeforeAgentStart, OnStop), Ask in a tool_call decision, a config schema
// (ConfigSchema), an event subscription (Events) and init's facts (Mode,
// HasUI, Trusted, ProjectRoot). The SDK sends 1.1 fields in its answer to
// init only to a 1.1 host, so an extension that uses them still loads in a
// 1.0 pi, where those parts stay unused (and an Ask becomes a block).
//
// # ABI 1.2: the conversation
//
// A pi that speaks ABI 1.2 (ABIMinor() >= 2) also lets an extension read
// and steer the conversation (session12.go): the session (GetSessionInfo,
// SessionBranch, SessionTree, SetSessionName, SetLabel, GetContextUsage,
// Compact; in a command NewSession, SwitchSession, ForkSession, Navigate),
// the agent (SendUserMessage, SendMessage, Abort, GetAgentState), and the
// hooks OnContext, OnUserBash and OnSessionBeforeSwitch, ...Fork, ...Tree,
// ...Compact. The 1.2 hooks and session events are declared only to a 1.2
// host. SessionAppend and SessionEntries are 1.1's custom entries.
//
// Outside wasip1 (for example in unit tests on the build machine) the package
// still compiles; the host functions then answer that no host is present.
package sdk
