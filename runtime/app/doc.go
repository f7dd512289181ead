// Package app assembles pi's runtime: from Options (working directory,
// PI_HOME, config file, trust, extra extensions, the active tools, model
// settings, where logs go) it loads pi.toml, starts the extension host,
// registers the built-in and extension tools, chooses the active set, and
// wires the hooks (extension tool_call, tool_result and bash_spawn hooks,
// events to extensions, redaction of the model's API key). The Runtime it
// returns runs single tool calls through the same pipeline as the agent
// loop, builds agents that run prompts, lists tools and extensions, and
// closes everything it started.
//
// It is the one place that wires these parts: the pi command uses it for
// every front end, and other programs embed pi through it (see
// docs/embedding.md and examples/embed). The model settings resolution
// (ResolveModel) lives here too; the transactions on pi.toml (extension
// install, update and remove, mcp add and remove, trust) are
// runtime/manage's.
package app
