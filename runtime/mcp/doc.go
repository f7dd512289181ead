// Package mcp is pi's Model Context Protocol client: the servers of
// [[mcp]] in pi.toml become a second source of tools beside WebAssembly
// extensions. A Manager starts each server on first use (a stdio server as
// a process in its own process group, or a streamable HTTP endpoint),
// lists its tools, keeps the list in a cache keyed by the server's
// configuration so that the next run can register them without waiting,
// and turns each tool into a tool.ToolDefinition named mcp__SERVER__TOOL.
// Those definitions are registered like extension tools and so run through
// the whole call pipeline: validation, extension tool_call and tool_result
// hooks, permission rules and approval.
//
// A server that fails to start or dies is an error naming it and the tail
// of its stderr; pi goes on without its tools. A cancelled call sends
// notifications/cancelled; tools/list_changed lists the tools again; Close
// ends every server with its process group.
//
// This is the only package that imports the MCP SDK
// (github.com/modelcontextprotocol/go-sdk); internal/archtest checks it.
package mcp
