// Package agent owns the agent loop: it sends the conversation to an
// llm.Provider, runs the tool calls of each assistant message through the
// tool pipeline (preflight in order, execution in parallel or in sequence,
// results in the assistant's order), emits the events of the `--mode json`
// stream, and builds the system prompt (tool snippets, guidelines, AGENTS.md).
package agent
