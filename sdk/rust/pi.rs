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
//! ABI 1.1 is here too: the host calls (kv_get, kv_set, http, call_tool,
//! notify, confirm, session_append, exec, ...), the facts of init
//! (abi_minor, mode, ...), commands (Extension::commands and command), the
//! input, before_agent_start and stop hooks, and asks
//! (tool_call_decision). pi.rs leaves the 1.1 parts out of init's answer
//! for a 1.0 host.
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
    #[link_name = "host_call"]
    fn pi_host_call(req: *const u8, req_len: i32, out: *mut u8, out_cap: i32) -> i64;
    #[link_name = "host_take"]
    fn pi_host_take(out: *mut u8, out_cap: i32) -> i64;
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

/// Appends s to out as a quoted JSON string. It is the one place pi.rs
/// escapes a string, for answers and host calls alike, and it writes the
/// very bytes Go's encoding/json writes (pi's host and Go SDK): `\"` `\\`
/// `\b` `\f` `\n` `\r` `\t`; other control characters as `\u00XX`; `<`,
/// `>` and `&` as `\u003c`, `\u003e`, `\u0026`; U+2028 and U+2029 as
/// `\u2028`, `\u2029`. (A &str is always UTF-8; bytes that are not come in
/// only through `from_utf8_go`, which replaces them as Go does.)
pub fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    let mut run = 0; // start of the text copied as it is
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{2028}' => Some("\\u2028"),
            '\u{2029}' => Some("\\u2029"),
            c if (c as u32) < 0x20 || c == '<' || c == '>' || c == '&' => Some(""),
            _ => None,
        };
        if let Some(e) = esc {
            out.push_str(&s[run..i]);
            if e.is_empty() {
                let _ = write!(out, "\\u{:04x}", c as u32);
            } else {
                out.push_str(e);
            }
            run = i + c.len_utf8();
        }
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Turns bytes into a String as Go does: each byte that is not part of
/// valid UTF-8 becomes U+FFFD (one per byte).
pub fn from_utf8_go(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    let mut rest = b;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.push_str(std::str::from_utf8(&rest[..good]).unwrap_or(""));
                out.push('\u{FFFD}');
                rest = &rest[good + 1..];
            }
        }
    }
    out
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
        Ok(from_utf8_go(&out))
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

// ---- host calls ------------------------------------------------------------

// The host methods of docs/abi.md ("Host methods" and "ABI 1.1"), one
// function each: kv, http, tool.call, ui, session and exec. Each returns
// Err with the reason when the host refused or failed, worded as the Go
// SDK words it: "host call kv.set: kv quota exceeded (5 of 4 bytes)". The
// 1.1 methods need a 1.1 host (abi_minor() >= 1); a 1.0 host answers them
// with an error. They work from any call pi makes into the extension (a
// tool, a hook, a command).

fn fail_call<T>(method: &str, msg: &str) -> Result<T, String> {
    Err(format!("host call {}: {}", method, msg))
}

/// `{"method": METHOD, "params": PARAMS}`, the envelope of a host call, as
/// it is sent.
pub fn host_request(method: &str, params: &Json) -> String {
    let mut out = String::from("{\"method\":");
    quote_into(method, &mut out);
    out.push_str(",\"params\":");
    params.write(&mut out);
    out.push('}');
    out
}

/// Sends the host method `method` with params (a JSON object) and returns
/// its result. The functions below are built on it; use it for a method a
/// newer host adds.
pub fn host_call(method: &str, params: &Json) -> Result<Json, String> {
    if !matches!(params, Json::Obj(_)) {
        return fail_call(method, "params must be a JSON object");
    }
    let req = host_request(method, params);
    let mut out = vec![0u8; 4096];
    let n = unsafe { pi_host_call(req.as_ptr(), req.len() as i32, out.as_mut_ptr(), out.len() as i32) };
    if n < 0 {
        let why = if n == -2 { "called outside a call from pi" } else { "a buffer lies outside memory" };
        return fail_call(method, &format!("host_call returned {} ({})", n, why));
    }
    if n as usize > out.len() {
        out = vec![0u8; n as usize];
        let got = unsafe { pi_host_take(out.as_mut_ptr(), n as i32) };
        if got != n {
            return fail_call(method, &format!("host_take returned {}, want {}", got, n));
        }
    }
    out.truncate(n as usize);
    let resp = match Json::parse(&out) {
        Ok(v) => v,
        Err(e) => return fail_call(method, &format!("malformed answer from the host: {}", e)),
    };
    if resp.get("ok").as_bool() == Some(true) {
        return Ok(match resp.get("result") {
            Json::Null => Json::Obj(Vec::new()),
            r => r.clone(),
        });
    }
    fail_call(method, resp.get("error").get("message").as_str().unwrap_or("failed"))
}

fn obj(members: Vec<(&str, Json)>) -> Json {
    Json::Obj(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn s(v: &str) -> Json {
    Json::Str(v.to_string())
}

/// Adds key: value to an object's members when value is not empty (as Go's
/// omitempty).
fn opt(m: &mut Vec<(&str, Json)>, key: &'static str, value: &str) {
    if !value.is_empty() {
        m.push((key, s(value)));
    }
}

/// The kv scopes ("" is the default: this project).
pub const PROJECT: &str = "project";
pub const GLOBAL: &str = "global";

#[doc(hidden)]
pub fn kv_get_params(key: &str, scope: &str) -> Json {
    let mut m = vec![("key", s(key))];
    opt(&mut m, "scope", scope);
    obj(m)
}

#[doc(hidden)]
pub fn kv_set_params(key: &str, value: &Json, scope: &str) -> Json {
    let mut m = vec![("key", s(key)), ("value", value.clone())];
    opt(&mut m, "scope", scope);
    obj(m)
}

#[doc(hidden)]
pub fn kv_list_params(prefix: &str, scope: &str) -> Json {
    let mut m = Vec::new();
    opt(&mut m, "prefix", prefix);
    opt(&mut m, "scope", scope);
    obj(m)
}

/// key's value in the store of scope (PROJECT, GLOBAL or "" for the
/// project's); None when it is not set.
pub fn kv_get(key: &str, scope: &str) -> Result<Option<Json>, String> {
    let r = host_call("kv.get", &kv_get_params(key, scope))?;
    Ok(match r.get("value") {
        Json::Null => None,
        v => Some(v.clone()),
    })
}

/// Stores value under key, durably before it returns; Json::Null deletes
/// the key. The host refuses a set past the extension's kv_mb quota.
pub fn kv_set(key: &str, value: &Json, scope: &str) -> Result<(), String> {
    host_call("kv.set", &kv_set_params(key, value, scope)).map(|_| ())
}

/// Removes key (nothing happens when it is not set).
pub fn kv_delete(key: &str, scope: &str) -> Result<(), String> {
    host_call("kv.delete", &kv_get_params(key, scope)).map(|_| ())
}

/// The keys that start with prefix, sorted.
pub fn kv_list(prefix: &str, scope: &str) -> Result<Vec<String>, String> {
    let r = host_call("kv.list", &kv_list_params(prefix, scope))?;
    let keys = r.get("keys").as_array().map(|a| a.iter().filter_map(|k| k.as_str().map(String::from)).collect());
    Ok(keys.unwrap_or_default())
}

/// An HTTP request pi makes for the extension (the guest has no sockets).
#[derive(Clone, Debug, Default)]
pub struct HttpRequest {
    /// "" is GET.
    pub method: String,
    /// Must match one of the extension's http grants.
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// Sent as text when it is UTF-8, else as base64.
    pub body: Option<Vec<u8>>,
    /// 0 is the current call's deadline.
    pub timeout_ms: u64,
}

/// The host's answer to an HttpRequest.
#[derive(Clone, Debug, Default)]
pub struct HttpResponse {
    pub status: u16,
    /// Each header once; repeated ones are joined with ", ".
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The header name as Go spells it ("Content-Type").
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

#[doc(hidden)]
pub fn http_params(r: &HttpRequest) -> Json {
    let mut m = Vec::new();
    opt(&mut m, "method", &r.method);
    m.push(("url", s(&r.url)));
    if !r.headers.is_empty() {
        m.push(("headers", Json::Obj(r.headers.iter().map(|(k, v)| (k.clone(), s(v))).collect())));
    }
    if let Some(b) = &r.body {
        match std::str::from_utf8(b) {
            Ok(t) => m.push(("body", s(t))),
            Err(_) => m.push(("bodyBase64", Json::Str(base64(b)))),
        }
    }
    if r.timeout_ms > 0 {
        m.push(("timeoutMs", Json::Num(r.timeout_ms as f64)));
    }
    obj(m)
}

/// Makes an HTTP request through the host. The URL and every redirect must
/// match the extension's http grants; bodies over 4 MiB are refused. A
/// response with any status is Ok: see its status.
pub fn http(req: &HttpRequest) -> Result<HttpResponse, String> {
    let r = host_call("http.request", &http_params(req))?;
    let mut out = HttpResponse { status: r.get("status").as_f64().unwrap_or(0.0) as u16, ..Default::default() };
    if let Json::Obj(h) = r.get("headers") {
        out.headers = h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect();
    }
    if let Some(b) = r.get("body").as_str() {
        out.body = b.as_bytes().to_vec();
    } else if let Some(b) = r.get("bodyBase64").as_str() {
        out.body = match unbase64(b) {
            Some(v) => v,
            None => return fail_call("http.request", "bodyBase64 is not base64"),
        };
    }
    Ok(out)
}

/// s in standard base64 with padding.
pub fn base64(s: &[u8]) -> String {
    const AL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity((s.len() + 2) / 3 * 4);
    for c in s.chunks(3) {
        let v = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        out.push(AL[(v >> 18) as usize] as char);
        out.push(AL[(v >> 12 & 63) as usize] as char);
        out.push(if c.len() > 1 { AL[(v >> 6 & 63) as usize] as char } else { '=' });
        out.push(if c.len() > 2 { AL[(v & 63) as usize] as char } else { '=' });
    }
    out
}

/// The bytes of standard base64 text (padded, as pi writes it); None when
/// it is not base64.
pub fn unbase64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (i, q) in b.chunks(4).enumerate() {
        let last = (i + 1) * 4 == b.len();
        let pad = if last { q.iter().rev().take_while(|&&c| c == b'=').count() } else { 0 };
        if pad > 2 {
            return None;
        }
        let mut v = 0u32;
        for (j, &c) in q.iter().enumerate() {
            let d = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if j >= 4 - pad => 0,
                _ => return None,
            };
            v = v << 6 | d as u32;
        }
        out.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8][..3 - pad]);
    }
    Some(out)
}

/// A tool's result as call_tool returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// Its blocks: {"type": "text", "text"} or {"type": "image", ...}.
    pub content: Vec<Json>,
    /// Null when none.
    pub details: Json,
    pub is_error: bool,
}

impl ToolResult {
    /// The text blocks joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter(|b| b.get("type").as_str() == Some("text")).map(|b| b.get("text").as_str().unwrap_or("")).collect();
        texts.join("\n")
    }
}

#[doc(hidden)]
pub fn tool_call_params(name: &str, input: &Json) -> Json {
    let mut m = vec![("name", s(name))];
    if !input.is_null() {
        m.push(("input", input.clone()));
    }
    obj(m)
}

/// Runs a tool (built in or another extension's) through the whole
/// pipeline the model's calls take; input is an object (Json::Null: {}).
/// The tool must be in the extension's tools grant. A call that a hook or
/// a rule blocked is Ok, with is_error and the reason as its text.
pub fn call_tool(name: &str, input: &Json) -> Result<ToolResult, String> {
    let r = host_call("tool.call", &tool_call_params(name, input))?;
    Ok(ToolResult {
        content: r.get("content").as_array().cloned().unwrap_or_default(),
        details: r.get("details").clone(),
        is_error: r.get("isError").as_bool() == Some(true),
    })
}

/// Notification levels of notify ("" is info).
pub const NOTIFY_INFO: &str = "info";
pub const NOTIFY_WARNING: &str = "warning";
pub const NOTIFY_ERROR: &str = "error";

#[doc(hidden)]
pub fn notify_params(message: &str, level: &str) -> Json {
    let mut m = vec![("message", s(message))];
    opt(&mut m, "level", level);
    obj(m)
}

/// Shows the person a message; without a person it is logged.
pub fn notify(message: &str, level: &str) -> Result<(), String> {
    host_call("ui.notify", &notify_params(message, level)).map(|_| ())
}

/// The answer to confirm: reason is "no-ui" (nobody can answer) or
/// "timeout" when confirmed is false without a person's no, else "".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Confirmation {
    pub confirmed: bool,
    pub reason: String,
}

#[doc(hidden)]
pub fn confirm_params(title: &str, message: &str, timeout_ms: u64) -> Json {
    let mut m = vec![("title", s(title)), ("message", s(message))];
    if timeout_ms > 0 {
        m.push(("timeoutMs", Json::Num(timeout_ms as f64)));
    }
    obj(m)
}

/// Asks the person a yes/no question (default no). Without a person it
/// answers at once {false, "no-ui"}; after timeout_ms (0: the current
/// call's deadline) {false, "timeout"}.
pub fn confirm(title: &str, message: &str, timeout_ms: u64) -> Result<Confirmation, String> {
    let r = host_call("ui.confirm", &confirm_params(title, message, timeout_ms))?;
    Ok(Confirmation { confirmed: r.get("confirmed").as_bool() == Some(true), reason: r.get("reason").as_str().unwrap_or("").to_string() })
}

/// One custom entry of the session.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionEntry {
    pub id: String,
    pub custom_type: String,
    pub data: Json,
}

#[doc(hidden)]
pub fn session_append_params(custom_type: &str, data: &Json) -> Json {
    obj(vec![("customType", s(custom_type)), ("data", data.clone())])
}

#[doc(hidden)]
pub fn session_entries_params(custom_type: &str) -> Json {
    let mut m = Vec::new();
    opt(&mut m, "customType", custom_type);
    obj(m)
}

/// Adds a custom entry to the session, on the current branch, never sent
/// to the model, and returns its id. custom_type is 1 to 128 printable
/// ASCII characters without spaces: use the extension's name.
pub fn session_append(custom_type: &str, data: &Json) -> Result<String, String> {
    let r = host_call("session.append", &session_append_params(custom_type, data))?;
    Ok(r.get("id").as_str().unwrap_or("").to_string())
}

/// The custom entries on the current branch, root first; only those of
/// custom_type unless it is "".
pub fn session_entries(custom_type: &str) -> Result<Vec<SessionEntry>, String> {
    let r = host_call("session.entries", &session_entries_params(custom_type))?;
    let entries = r.get("entries").as_array().map(|a| {
        a.iter()
            .map(|e| SessionEntry {
                id: e.get("id").as_str().unwrap_or("").to_string(),
                custom_type: e.get("customType").as_str().unwrap_or("").to_string(),
                data: e.get("data").clone(),
            })
            .collect()
    });
    Ok(entries.unwrap_or_default())
}

/// What a command run by exec produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
}

#[doc(hidden)]
pub fn exec_params(argv: &[&str], cwd: &str, timeout_ms: u64, stdin: &str) -> Json {
    let mut m = vec![("argv", Json::Arr(argv.iter().map(|a| s(a)).collect()))];
    opt(&mut m, "cwd", cwd);
    if timeout_ms > 0 {
        m.push(("timeoutMs", Json::Num(timeout_ms as f64)));
    }
    opt(&mut m, "stdin", stdin);
    obj(m)
}

/// Runs argv on the host, outside the sandbox, when it matches one of the
/// extension's exec grants and its directory (cwd: absolute, or relative
/// to the project root; "" is the project root) lies in its fs grants. A
/// command that exits non-zero is Ok: see exit_code.
pub fn exec(argv: &[&str], cwd: &str, timeout_ms: u64, stdin: &str) -> Result<ExecResult, String> {
    if argv.is_empty() {
        return fail_call("exec", "argv is empty");
    }
    let r = host_call("exec", &exec_params(argv, cwd, timeout_ms, stdin))?;
    Ok(ExecResult {
        stdout: r.get("stdout").as_str().unwrap_or("").to_string(),
        stderr: r.get("stderr").as_str().unwrap_or("").to_string(),
        exit_code: r.get("exitCode").as_f64().unwrap_or(0.0) as i32,
    })
}

// ---- what init said (ABI 1.1) ------------------------------------------------

#[derive(Default)]
struct Facts {
    abi_minor: i64,
    trusted: bool,
    has_ui: bool,
    mode: String,
    project_root: String,
}

struct FactsSlot(UnsafeCell<Option<Facts>>);
// A wasm32 instance runs one thread, and pi never overlaps calls into it.
unsafe impl Sync for FactsSlot {}
static FACTS: FactsSlot = FactsSlot(UnsafeCell::new(None));

fn facts() -> &'static mut Facts {
    let slot = unsafe { &mut *FACTS.0.get() };
    if slot.is_none() {
        *slot = Some(Facts::default());
    }
    slot.as_mut().unwrap()
}

/// The host's ABI minor version: 1 for a 1.1 host, 0 for a 1.0 host (or
/// before init).
pub fn abi_minor() -> i64 {
    facts().abi_minor
}

/// Whether the project's pi.toml is trusted.
pub fn trusted() -> bool {
    facts().trusted
}

/// Whether a person can answer confirm.
pub fn has_ui() -> bool {
    facts().has_ui
}

/// How pi runs: "interactive", "print", "json", "rpc", "tool" or "inspect"
/// ("" for a 1.0 host).
pub fn mode() -> &'static str {
    &facts().mode
}

/// The folder whose pi.toml applies ("" for a 1.0 host).
pub fn project_root() -> &'static str {
    &facts().project_root
}

// ---- the extension ---------------------------------------------------------

/// A slash command (ABI 1.1): a line /NAME ARGS typed by the user runs
/// Extension::command with ARGS instead of going to the model.
#[derive(Clone, Debug)]
pub struct Command {
    /// Without the slash: [a-z][a-z0-9-]*.
    pub name: &'static str,
    /// One line for /help.
    pub description: &'static str,
    /// What it takes, such as "[item]"; "" for none.
    pub argument_hint: &'static str,
}

/// A command's answer: text is shown to the user; prompt, when not empty,
/// is then sent to the model as the user's message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandResult {
    pub text: String,
    pub prompt: String,
}

/// A tool_call hook's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Let the call through.
    Allow,
    /// Block it with the reason.
    Block(String),
    /// Ask the person the question first (ABI 1.1; a 1.0 host gets a block
    /// saying so).
    Ask(String),
}

/// An input hook's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum InputAction {
    /// Let the prompt through unchanged.
    Pass,
    /// Replace the prompt's text.
    Replace(String),
    /// Keep the prompt from the model and show the message to the user.
    Handled(String),
}

/// What a before_agent_start hook changes; what it leaves empty stays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentStartChange {
    /// Replaces the system prompt for this prompt's run.
    pub system_prompt: String,
    /// Is added after it, after a blank line.
    pub append_system_prompt: String,
    /// User-role messages added before the prompt, one text each.
    pub context: Vec<String>,
}

/// What an extension implements. The crate root defines
/// `pub fn new_extension() -> Box<dyn pi::Extension>`; pi.rs calls it once
/// per instance, before init.
pub trait Extension {
    /// init's result as JSON: {"name", "version", "description"?, "tools":
    /// [ToolSpec], "hooks": ["tool_call", ...], "wants"?}. ABI 1.1 adds
    /// "configSchema" (a JSON Schema of [extensions.config]), "events",
    /// the hooks "input", "before_agent_start", "stop" and "wants" http and
    /// tools: write them here too; pi.rs leaves them out for a 1.0 host
    /// (which would refuse them) and logs a warning. Commands are declared
    /// by `commands`, never here.
    fn declaration(&self) -> &'static str;

    /// Called by init with [extensions.config] ({} when none); an error
    /// fails the load with its message. abi_minor(), mode() and the other
    /// facts are set before it runs.
    fn init(&mut self, _config: &Json) -> Result<(), String> {
        Ok(())
    }

    /// One tool call: Ok(text) is the result, Err(message) an error result
    /// (isError).
    fn tool(&mut self, name: &str, input: &Json) -> Result<String, String>;

    /// The tool_call hook (declare "tool_call" in hooks): Some(reason)
    /// blocks the call. To ask the person instead, implement
    /// tool_call_decision.
    fn tool_call(&mut self, _tool: &str, _input: &Json) -> Option<String> {
        None
    }

    /// The tool_call hook's full answer; by default, tool_call's.
    fn tool_call_decision(&mut self, tool: &str, input: &Json) -> Decision {
        match self.tool_call(tool, input) {
            Some(reason) => Decision::Block(reason),
            None => Decision::Allow,
        }
    }

    /// Any other method (hook.tool_result, hook.bash_spawn, event): the
    /// result as JSON, or an error message.
    fn other(&mut self, method: &str, _params: &Json) -> Result<Json, String> {
        Err(format!("unknown method {}", method))
    }

    // ---- ABI 1.1: used only with a 1.1 host (abi_minor() >= 1) ----

    /// The slash commands; `command` runs them.
    fn commands(&self) -> Vec<Command> {
        Vec::new()
    }

    /// Runs /name args (args: the rest of the line, trimmed); an error is
    /// shown to the user.
    fn command(&mut self, name: &str, _args: &str) -> Result<CommandResult, String> {
        Err(format!("no command /{}", name))
    }

    /// The input hook (declare "input" in hooks): sees what a person sent,
    /// in mode, with its images (an array of image blocks).
    fn input(&mut self, _text: &str, _images: &Json, _mode: &str) -> InputAction {
        InputAction::Pass
    }

    /// The before_agent_start hook (declare it in hooks): once per prompt.
    fn before_agent_start(&mut self, _prompt: &str, _system_prompt: &str) -> AgentStartChange {
        AgentStartChange::default()
    }

    /// The stop hook (declare "stop" in hooks): the model ended a turn
    /// with no tool calls. Some(message) sends message as a user message
    /// and the run goes on; None lets it end.
    fn stop(&mut self, _last_text: &str, _turns: u32) -> Option<String> {
        None
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

/// init's result: the declaration without what a 1.0 host refuses, plus
/// the commands for a 1.1 host.
fn declare(ext: &dyn Extension) -> Result<Json, String> {
    let decl = Json::parse(ext.declaration().as_bytes()).map_err(|e| format!("declaration() is not JSON: {}", e))?;
    let members = match decl {
        Json::Obj(m) => m,
        _ => return Err("declaration() is not a JSON object".to_string()),
    };
    let v11 = abi_minor() >= 1;
    let mut dropped = false;
    let mut out = Vec::new();
    for (k, v) in members {
        let key = k.clone();
        match (key.as_str(), v) {
            ("commands", _) => return Err("declaration() has \"commands\": declare commands with Extension::commands".to_string()),
            ("configSchema", _) | ("events", _) if !v11 => dropped = true,
            ("hooks", Json::Arr(hooks)) if !v11 => {
                let n = hooks.len();
                let kept: Vec<Json> = hooks.into_iter().filter(|h| !matches!(h.as_str(), Some("input") | Some("before_agent_start") | Some("stop"))).collect();
                dropped |= kept.len() != n;
                out.push((k, Json::Arr(kept)));
            }
            ("wants", Json::Obj(wants)) if !v11 => {
                let n = wants.len();
                let kept: Vec<(String, Json)> = wants.into_iter().filter(|(w, _)| w != "http" && w != "tools").collect();
                dropped |= kept.len() != n;
                out.push((k, Json::Obj(kept)));
            }
            (_, v) => out.push((k, v)),
        }
    }
    let commands = ext.commands();
    if !commands.is_empty() && !v11 {
        dropped = true;
    } else if !commands.is_empty() {
        let list = commands
            .iter()
            .map(|c| {
                let mut m = vec![("name", s(c.name)), ("description", s(c.description))];
                opt(&mut m, "argumentHint", c.argument_hint);
                obj(m)
            })
            .collect();
        out.push(("commands".to_string(), Json::Arr(list)));
    }
    if dropped {
        log(WARN, "this extension uses ABI 1.1 (commands, prompt hooks, config schema, events, http or tools wants), but the host speaks ABI 1.0: those parts stay unused");
    }
    Ok(Json::Obj(out))
}

fn read_facts(params: &Json) {
    let f = facts();
    f.abi_minor = params.get("abiMinor").as_f64().unwrap_or(0.0) as i64;
    f.trusted = params.get("trusted").as_bool() == Some(true);
    f.has_ui = params.get("hasUI").as_bool() == Some(true);
    f.mode = params.get("mode").as_str().unwrap_or("").to_string();
    f.project_root = params.get("projectRoot").as_str().unwrap_or("").to_string();
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

fn ok_json(result: Json) -> i64 {
    ok(&result.to_json())
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
    let text = |key: &str| params.get(key).as_str().unwrap_or("").to_string();
    match method {
        "init" => {
            read_facts(params);
            match ext.init(params.get("config")).and_then(|_| declare(&**ext)) {
                Ok(d) => ok_json(d),
                Err(e) => fail(&e),
            }
        }
        "tool.execute" => {
            let name = params.get("toolName").as_str().unwrap_or("");
            let (text, is_error) = match ext.tool(name, params.get("input")) {
                Ok(t) => (t, false),
                Err(e) => (e, true),
            };
            ok(&format!("{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"isError\":{}}}", quote(&text), is_error))
        }
        "hook.tool_call" => match ext.tool_call_decision(&text("toolName"), params.get("input")) {
            Decision::Allow => ok("{}"),
            Decision::Block(reason) => ok_json(obj(vec![("block", Json::Bool(true)), ("reason", s(&reason))])),
            Decision::Ask(q) if abi_minor() >= 1 => ok_json(obj(vec![("ask", s(&q))])),
            Decision::Ask(q) => {
                let reason = format!("needs approval: {} (this pi cannot ask: it speaks extension ABI 1.0)", q);
                ok_json(obj(vec![("block", Json::Bool(true)), ("reason", s(&reason))]))
            }
        },
        "command.execute" => {
            let name = text("name");
            if !ext.commands().iter().any(|c| c.name == name) {
                return fail(&format!("no command /{}", name));
            }
            match ext.command(&name, &text("args")) {
                Ok(r) => {
                    let mut m = Vec::new();
                    opt(&mut m, "text", &r.text);
                    opt(&mut m, "prompt", &r.prompt);
                    ok_json(obj(m))
                }
                Err(e) => fail(&e),
            }
        }
        "hook.input" => match ext.input(&text("text"), params.get("images"), &text("mode")) {
            InputAction::Pass => ok("{}"),
            InputAction::Replace(t) => ok_json(obj(vec![("text", s(&t))])),
            InputAction::Handled(msg) => {
                let mut m = vec![("handled", Json::Bool(true))];
                opt(&mut m, "message", &msg);
                ok_json(obj(m))
            }
        },
        "hook.before_agent_start" => {
            let c = ext.before_agent_start(&text("prompt"), &text("systemPrompt"));
            let mut m = Vec::new();
            opt(&mut m, "systemPrompt", &c.system_prompt);
            opt(&mut m, "appendSystemPrompt", &c.append_system_prompt);
            if !c.context.is_empty() {
                let msgs = c.context.iter().map(|t| obj(vec![("content", Json::Arr(vec![obj(vec![("type", s("text")), ("text", s(t))])]))])).collect();
                m.push(("messages", Json::Arr(msgs)));
            }
            ok_json(obj(m))
        }
        "hook.stop" => {
            let turns = params.get("turns").as_f64().unwrap_or(0.0) as u32;
            match ext.stop(&text("lastText"), turns) {
                None => ok("{}"),
                Some(msg) if msg.trim().is_empty() => fail("a stop hook continued without a message"),
                Some(msg) => ok_json(obj(vec![("continue", Json::Bool(true)), ("message", s(&msg))])),
            }
        }
        m => match ext.other(m, params) {
            Ok(v) => ok(&v.to_json()),
            Err(e) => fail(&e),
        },
    }
}
