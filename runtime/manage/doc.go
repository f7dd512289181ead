// Package manage owns the transactions on pi.toml: extension install,
// update, remove and list; mcp add, remove and list; trust and untrust;
// adding tools to [tools] active. Every edit of a project's pi.toml goes
// through one helper that keeps the project's trust as it was (a trusted
// project stays trusted, an untrusted one stays untrusted), so the CLI and
// embedders never repeat that sequence.
//
// It sits beside runtime/app (the assembly), not on top of it: what it
// needs of the extension host (inspecting a module in an empty sandbox) it
// asks runtime/extensions directly, and what it needs of pi.toml it asks
// runtime/config. cmd/pi reaches pi.toml, trust and the grant grammar only
// through it.
package manage
