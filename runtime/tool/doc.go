// Package tool owns the two layers of tool: the product-layer ToolDefinition
// (what built-ins and extensions register, with source info, prompt text and
// an execute that gets a tool Context) and the core-layer AgentTool (what the
// agent loop runs). It also owns results and content blocks, the Registry with
// its active set, JSON Schema validation of arguments, the hook types, and the
// call pipeline shared by the loop and `pi tool call`.
package tool
