// Package pi holds the sources pi ships to extension authors, embedded from
// the real files of this module so they cannot drift: the Go SDK (sdk/ and
// the internal/abi package it imports, with the module's go.mod for its Go
// version), the C header sdk/c/pi.h and the Rust module sdk/rust/pi.rs.
// `pi ext new` writes them into a new extension project
// (internal/scaffold), so that project builds with nothing but its
// language's toolchain, offline. Nothing else belongs in this package.
package pi

import "embed"

// AuthorFiles are the shipped sources, under their paths in this module
// (sdk/register.go, internal/abi/abi.go, sdk/c/pi.h, sdk/rust/pi.rs,
// go.mod, ...). Test files are embedded too; the scaffold skips them.
//
//go:embed go.mod sdk/*.go internal/abi/*.go sdk/c/pi.h sdk/rust/pi.rs
var AuthorFiles embed.FS
