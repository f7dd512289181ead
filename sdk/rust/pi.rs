//! pi.rs — the guest side of pi's extension ABI v1 for Rust, as one module
//! with no external crates (it builds with Debian's rustc 1.63 and newer).
//!
//! It defines the exports pi calls (pi_abi_v1, pi_alloc, pi_free, pi_call),
//! a JSON value with a strict parser and a writer, and the request
//! dispatch. An extension adds it as a module (`mod pi;`, this file at
//! src/pi.rs) and defines, at its crate root, the function that makes its
//! extension:
//!
//! ```ignore
//! mod pi;
//! use pi::{Extension, Json};
//!
//! struct Hello;
//! impl Extension for Hello {
//!     fn declaration(&self) -> &'static str {
//!         r#"{"name":"hello","version":"0.1.0","tools":[{"name":"hello",
//!             "description":"Say hello.","parameters":{"type":"object","properties":{}}}]}"#
//!     }
//!     fn tool(&mut self, _name: &str, _input: &Json) -> Result<String, String> {
//!         Ok("Hello!".to_string())
//!     }
//! }
//! pub fn new_extension() -> Box<dyn Extension> { Box::new(Hello) }
//! ```
//!
//! Build it as a cdylib for WASI preview 1:
//!
//! ```sh
//! rustc --edition 2021 --crate-type cdylib --target wasm32-wasi -O -C strip=debuginfo -o hello.wasm src/lib.rs
//! ```
//!
//! (`wasm32-wasip1` on rustc 1.78 and newer; Debian: apt-get install rustc
//! libstd-rust-dev-wasm32.) A panic aborts, which traps: pi counts it as a
//! fault and starts a fresh instance for the next call. Return errors
//! instead. The wire contract is docs/abi.md in pi's source tree.
//!
//! Shipped by pi (`pi ext new NAME --lang rust` copies it to src/pi.rs); it
//! is the file sdk/rust/pi.rs of pi's source tree.

#![allow(dead_code)]

use std::alloc::{alloc, dealloc, Layout};
use std::cell::UnsafeCell;
use std::fmt::Write as _;

// ---- host imports ----------------------------------------------------------

#[link(wasm_import_module = "pi")]
extern "C" {
    #[link_name = "log"]
    fn pi_host_log(level: i32, ptr: *const u8, len: i32);
}

/// Log levels of `log`.
pub const TRACE: i32 = 0;
pub const DEBUG: i32 = 1;
pub const INFO: i32 = 2;
pub const WARN: i32 = 3;
pub const ERROR: i32 = 4;

/// Writes one line to pi's log under ext.NAME.
pub fn log(level: i32, msg: &str) {
    unsafe { pi_host_log(level, msg.as_ptr(), msg.len() as i32) }
}

// ---- JSON ------------------------------------------------------------------

/// A JSON value. Objects keep their members in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;
const MAX_DEPTH: usize = 128;

impl Json {
    /// Parses exactly one JSON value (white space around it allowed).
    pub fn parse(text: &[u8]) -> Result<Json, String> {
        let mut p = Parser { s: text, i: 0 };
        let v = p.value(0)?;
        p.ws();
        if p.i != text.len() {
            return Err(format!("trailing bytes at offset {}", p.i));
        }
        Ok(v)
    }

    /// The value of key in an object; Null when absent or not an object
    /// (the last one when written twice).
    pub fn get(&self, key: &str) -> &Json {
        if let Json::Obj(members) = self {
            for (k, v) in members.iter().rev() {
                if k == key {
                    return v;
                }
            }
        }
        &NULL
    }

    /// Element i of an array; Null past its end or when not an array.
    pub fn at(&self, i: usize) -> &Json {
        match self {
            Json::Arr(a) if i < a.len() => &a[i],
            _ => &NULL,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        *self == Json::Null
    }

    /// Writes the value as compact JSON (NaN and infinities as null).
    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) if n.is_finite() => {
                let _ = write!(out, "{}", n);
            }
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => quote_into(s, out),
            Json::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Obj(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote_into(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as compact JSON.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }
}

/// Appends s to out as a quoted JSON string, escaped.
pub fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// s as a quoted JSON string.
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    quote_into(s, &mut out);
    out
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{} at offset {}", what, self.i))
    }

    fn lit(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("invalid literal")
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return self.err("nested too deep");
        }
        self.ws();
        match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'n') => self.lit("null", Json::Null),
            Some(b't') => self.lit("true", Json::Bool(true)),
            Some(b'f') => self.lit("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(a));
                        }
                        _ => return self.err("expected , or ]"),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut m = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(m));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return self.err("expected a key");
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return self.err("expected :");
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    m.push((k, v));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(m));
                        }
                        _ => return self.err("expected , or }"),
                    }
                }
            }
            Some(_) => self.number(),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = match self.s.get(self.i) {
                Some(c) => *c,
                None => return self.err("short \\u escape"),
            };
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return self.err("bad \\u escape"),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = match self.s.get(self.i) {
                Some(c) => *c,
                None => return self.err("unterminated string"),
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = match self.s.get(self.i) {
                        Some(e) => *e,
                        None => return self.err("unterminated string"),
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    self.i = save;
                                }
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return self.err("bad escape"),
                    }
                }
                c if c < 0x20 => return self.err("control character in string"),
                c => out.push(c),
            }
        }
        String::from_utf8(out).or_else(|_| self.err("string is not UTF-8"))
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        let digits = |p: &mut Parser| {
            let s = p.i;
            while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i > s
        };
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        if self.s.get(self.i) == Some(&b'0') {
            self.i += 1;
        } else if !digits(self) {
            return self.err("invalid value");
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !digits(self) {
                return self.err("invalid number");
            }
        }
        if matches!(self.s.get(self.i), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return self.err("invalid number");
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        text.parse::<f64>().map(Json::Num).or_else(|_| self.err("invalid number"))
    }
}

// ---- the extension ---------------------------------------------------------

/// What an extension implements. The crate root defines
/// `pub fn new_extension() -> Box<dyn pi::Extension>`; pi.rs calls it once
/// per instance, before init.
pub trait Extension {
    /// init's result as JSON: {"name", "version", "description"?, "tools":
    /// [ToolSpec], "hooks": ["tool_call", ...], "wants"?}.
    fn declaration(&self) -> &'static str;

    /// Called by init with [extensions.config] ({} when none); an error
    /// fails the load with its message.
    fn init(&mut self, _config: &Json) -> Result<(), String> {
        Ok(())
    }

    /// One tool call: Ok(text) is the result, Err(message) an error result
    /// (isError).
    fn tool(&mut self, name: &str, input: &Json) -> Result<String, String>;

    /// The tool_call hook (declare "tool_call" in hooks): Some(reason)
    /// blocks the call.
    fn tool_call(&mut self, _tool: &str, _input: &Json) -> Option<String> {
        None
    }

    /// Any other method (hook.tool_result, hook.bash_spawn, event): the
    /// result as JSON, or an error message.
    fn other(&mut self, method: &str, _params: &Json) -> Result<Json, String> {
        Err(format!("unknown method {}", method))
    }
}

struct Slot(UnsafeCell<Option<Box<dyn Extension>>>);
// A wasm32 instance runs one thread, and pi never overlaps calls into it.
unsafe impl Sync for Slot {}
static EXT: Slot = Slot(UnsafeCell::new(None));

fn extension() -> &'static mut Box<dyn Extension> {
    let slot = unsafe { &mut *EXT.0.get() };
    if slot.is_none() {
        *slot = Some(crate::new_extension());
    }
    slot.as_mut().unwrap()
}

// ---- the exports -----------------------------------------------------------

#[no_mangle]
pub extern "C" fn pi_abi_v1() {}

fn layout(size: i32) -> Layout {
    Layout::from_size_align((size.max(1)) as usize, 1).unwrap()
}

#[no_mangle]
pub extern "C" fn pi_alloc(size: i32) -> *mut u8 {
    if size < 0 {
        return std::ptr::null_mut();
    }
    unsafe { alloc(layout(size)) }
}

#[no_mangle]
pub extern "C" fn pi_free(ptr: *mut u8, size: i32) {
    if !ptr.is_null() && size >= 0 {
        unsafe { dealloc(ptr, layout(size)) }
    }
}

/// Hands an answer to pi: a buffer of exactly its length, freed by pi with
/// pi_free(ptr, len).
fn hand(answer: String) -> i64 {
    let n = answer.len() as i32;
    let p = pi_alloc(n);
    if p.is_null() {
        return 0;
    }
    unsafe { std::ptr::copy_nonoverlapping(answer.as_ptr(), p, answer.len()) };
    ((p as u32 as i64) << 32) | (n as u32 as i64)
}

fn ok(result: &str) -> i64 {
    hand(format!("{{\"ok\":true,\"result\":{}}}", result))
}

fn fail(message: &str) -> i64 {
    hand(format!("{{\"ok\":false,\"error\":{{\"message\":{}}}}}", quote(message)))
}

#[no_mangle]
pub extern "C" fn pi_call(ptr: *const u8, len: i32) -> i64 {
    let req = unsafe { std::slice::from_raw_parts(ptr, len.max(0) as usize) };
    let req = match Json::parse(req) {
        Ok(v) => v,
        Err(e) => return fail(&format!("malformed request: {}", e)),
    };
    let params = req.get("params");
    let method = match req.get("method").as_str() {
        Some(m) => m,
        None => return fail("malformed request: no method"),
    };
    let ext = extension();
    match method {
        "init" => match ext.init(params.get("config")) {
            Ok(()) => ok(ext.declaration()),
            Err(e) => fail(&e),
        },
        "tool.execute" => {
            let name = params.get("toolName").as_str().unwrap_or("");
            let (text, is_error) = match ext.tool(name, params.get("input")) {
                Ok(t) => (t, false),
                Err(e) => (e, true),
            };
            ok(&format!("{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"isError\":{}}}", quote(&text), is_error))
        }
        "hook.tool_call" => {
            let tool = params.get("toolName").as_str().unwrap_or("");
            match ext.tool_call(tool, params.get("input")) {
                Some(reason) => ok(&format!("{{\"block\":true,\"reason\":{}}}", quote(&reason))),
                None => ok("{}"),
            }
        }
        m => match ext.other(m, params) {
            Ok(v) => ok(&v.to_json()),
            Err(e) => fail(&e),
        },
    }
}
