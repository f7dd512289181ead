// Package config owns pi.toml: finding the global ($PI_HOME/pi.toml) and
// project (pi.toml in the working directory or its nearest parent) files,
// strict decoding with file:line errors, layering the project over the
// global file, validation of every value, the trust store that gates the
// project settings able to run code (tools.bash and [[extensions]]), and the
// byte-preserving edits behind `pi ext install` and `pi ext remove`.
//
// A Config returned by Load is a value: nothing in this package changes it
// afterwards, and Config.With returns a new Config with command-line flags
// laid over it.
package config
