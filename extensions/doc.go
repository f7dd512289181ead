// Package extensions owns the WebAssembly extension host: it loads `.wasm`
// modules that follow ABI v1 (docs/abi.md), verifies them (sha256, the
// pi_abi_v1 marker, the exports, the imports) before they are instantiated,
// compiles them through an on-disk compilation cache, runs them in a
// deny-by-default WASI sandbox with memory and time limits, and turns them
// into tool.ToolDefinitions, tool_call / tool_result hooks, bash_spawn hooks
// and event listeners.
//
// It is the only package of the project that imports wazero. A guest that
// traps, loops, exhausts its memory or answers garbage is a fault: the call
// fails with a message naming the extension, the instance is discarded and the
// next call gets a fresh one; after three faults in a row the extension is
// disabled for the rest of the process. The host never panics or hangs
// because of a guest.
package extensions
