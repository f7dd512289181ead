// Package output owns how the built-in tools bound what they show of a long
// text: truncation to the first or last lines and bytes (the reference
// agent's rules and limits), the sanitizer that makes a command's terminal
// output plain valid UTF-8 text, and the Accumulator that keeps, in bounded
// memory, the cleaned tail of a command's output as it streams while the
// raw whole goes to a capped file with secrets redacted. It knows nothing
// of tools or processes: the caller words notices and makes the file.
package output
