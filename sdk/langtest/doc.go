// Package langtest holds the tests of pi's guest SDKs for C and Rust
// (sdk/c/pi.h and sdk/rust/pi.rs): test guests in testdata, built with the
// real toolchains (clang with wasi-libc, rustc with the wasm32-wasi
// standard library; a test skips, saying what to install, when one is
// missing) and run by the real pi binary, end to end. It has no code of
// its own.
package langtest
