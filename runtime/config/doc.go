// Package config owns pi.toml: finding the global ($PI_HOME/pi.toml) and
// project (the nearest pi.toml from the working directory up to the project
// root) files, refusing files other users can change, strict decoding with
// file:line errors, layering the project over the global file, validation
// of every value, the trust store that gates the project settings able to
// run code (tools.bash and [[extensions]], whose fs grants trust pins to
// where they really point), and the byte-preserving edits behind
// `pi ext install` and `pi ext remove`.
//
// A Config returned by Load is a value: nothing in this package changes it
// afterwards, and Config.With returns a new Config with command-line flags
// laid over it.
package config
