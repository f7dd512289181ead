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
//! Whole tool results (Extension::execute returning a ToolOutput: text and
//! image blocks, details, terminate; ToolContext::emit for progress) and
//! typed tool_result, bash_spawn and event hooks work with any host. ABI
//! 1.2 is here too: a typed helper for every 1.2 host method (select,
//! set_status, set_widget, component, session_branch, send_message,
//! tools_register, model_get, llm_complete, flags_get, timer_set,
//! watch_add, bus_emit, shutdown, ...), Line and Span for styled lines,
//! and an Extension method for every 1.2 guest method and hook
//! (component_render, tool_render, shortcut, timer, watch, bus_message,
//! context, user_bash, session_before, ...). pi.rs leaves the 1.2 parts
//! out of init's answer for an older host.
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
    #[link_name = "emit"]
    fn pi_host_emit(ptr: *const u8, len: i32) -> i32;
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

// ---- whole tool results ------------------------------------------------------

/// One piece of a tool result or a message: text, or an image carried as
/// base64 data with its MIME type.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Text(String),
    Image { data: String, mime_type: String },
}

impl Block {
    /// A text block.
    pub fn text(s: &str) -> Block {
        Block::Text(s.to_string())
    }

    /// An image block of the bytes data (encoded in base64 here).
    pub fn image(data: &[u8], mime_type: &str) -> Block {
        Block::Image { data: base64(data), mime_type: mime_type.to_string() }
    }

    /// The block as JSON: {"type": "text", "text"} or {"type": "image",
    /// "data", "mimeType"}.
    pub fn to_json(&self) -> Json {
        match self {
            Block::Text(t) => obj(vec![("type", s("text")), ("text", s(t))]),
            Block::Image { data, mime_type } => obj(vec![("type", s("image")), ("data", s(data)), ("mimeType", s(mime_type))]),
        }
    }

    /// A block read from JSON (None for another type).
    pub fn from_json(v: &Json) -> Option<Block> {
        match v.get("type").as_str() {
            Some("text") => Some(Block::Text(v.get("text").as_str().unwrap_or("").to_string())),
            Some("image") => Some(Block::Image {
                data: v.get("data").as_str().unwrap_or("").to_string(),
                mime_type: v.get("mimeType").as_str().unwrap_or("").to_string(),
            }),
            _ => None,
        }
    }
}

fn blocks_json(blocks: &[Block]) -> Json {
    Json::Arr(blocks.iter().map(Block::to_json).collect())
}

impl Default for Json {
    fn default() -> Json {
        Json::Null
    }
}

/// A tool's whole result, as the Go SDK's sdk.Result: content blocks,
/// details (free JSON for the UI and the event stream, never sent to the
/// model; Null: none), is_error and terminate (ask the loop to end the run
/// after this batch of calls). It is also a partial result for
/// ToolContext::emit (content and details count there).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<Block>,
    pub details: Json,
    pub is_error: bool,
    pub terminate: bool,
}

impl ToolOutput {
    /// A result with one text block.
    pub fn text(t: &str) -> ToolOutput {
        ToolOutput { content: vec![Block::text(t)], ..Default::default() }
    }

    /// An error result (is_error) with one text block.
    pub fn error(t: &str) -> ToolOutput {
        ToolOutput { content: vec![Block::text(t)], is_error: true, ..Default::default() }
    }

    /// The result with details set.
    pub fn with_details(mut self, details: Json) -> ToolOutput {
        self.details = details;
        self
    }

    /// The result with a block added.
    pub fn with_block(mut self, b: Block) -> ToolOutput {
        self.content.push(b);
        self
    }

    /// The result with terminate set.
    pub fn terminating(mut self) -> ToolOutput {
        self.terminate = true;
        self
    }

    /// The result as tool.execute answers it (whole) or as emit's payload.
    pub fn to_json(&self, whole: bool) -> Json {
        let mut m = vec![("content", blocks_json(&self.content))];
        if !self.details.is_null() {
            m.push(("details", self.details.clone()));
        }
        if whole && self.is_error {
            m.push(("isError", Json::Bool(true)));
        }
        if whole && self.terminate {
            m.push(("terminate", Json::Bool(true)));
        }
        obj(m)
    }
}

/// What Extension::execute gets besides its input.
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    pub tool_name: String,
    pub tool_call_id: String,
    /// The directory the call runs in.
    pub cwd: String,
    cancelled: bool,
}

impl ToolContext {
    /// Sends a partial result (progress for the UI and the event stream;
    /// never sent to the model). It returns true when the call was
    /// cancelled or timed out: the tool should stop and return.
    pub fn emit(&mut self, partial: &ToolOutput) -> bool {
        let b = partial.to_json(false).to_json();
        let rc = unsafe { pi_host_emit(b.as_ptr(), b.len() as i32) };
        if rc < 0 {
            log(WARN, &format!("emit from tool {}: the host answered {}", self.tool_name, rc));
        }
        if rc == 1 {
            self.cancelled = true;
        }
        self.cancelled
    }

    /// Whether an earlier emit learned that the call was cancelled.
    pub fn cancelled(&self) -> bool {
        self.cancelled
    }
}

/// A tool_result hook's change; None keeps a field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultPatch {
    pub content: Option<Vec<Block>>,
    pub details: Option<Json>,
    pub is_error: Option<bool>,
}

/// A bash_spawn hook's change: an empty command or cwd keeps it; env, when
/// Some, replaces the variables the hook was shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BashSpawnChange {
    pub command: String,
    pub cwd: String,
    pub env: Option<Vec<(String, String)>>,
}

// ---- ABI 1.2: lines ----------------------------------------------------------

/// A span of a styled line: style is space-separated names from accent
/// muted dim success warning error border selected bold italic underline
/// inverse ("" for none). pi draws it in its theme and removes control
/// characters: never write escape sequences.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    pub text: String,
    pub style: String,
}

/// A span.
pub fn span(text: &str, style: &str) -> Span {
    Span { text: text.to_string(), style: style.to_string() }
}

/// One line to show: plain text or styled spans.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    Text(String),
    Spans(Vec<Span>),
}

impl Line {
    pub fn to_json(&self) -> Json {
        match self {
            Line::Text(t) => s(t),
            Line::Spans(sp) => Json::Arr(
                sp.iter()
                    .map(|x| {
                        let mut m = vec![("text", s(&x.text))];
                        opt(&mut m, "style", &x.style);
                        obj(m)
                    })
                    .collect(),
            ),
        }
    }
}

impl From<&str> for Line {
    fn from(t: &str) -> Line {
        Line::Text(t.to_string())
    }
}

impl From<String> for Line {
    fn from(t: String) -> Line {
        Line::Text(t)
    }
}

impl From<Vec<Span>> for Line {
    fn from(sp: Vec<Span>) -> Line {
        Line::Spans(sp)
    }
}

fn lines_json(lines: &[Line]) -> Json {
    Json::Arr(lines.iter().map(Line::to_json).collect())
}

// ---- ABI 1.2 host calls ------------------------------------------------------

// The host methods ABI 1.2 adds (docs/abi.md, "ABI 1.2"). They need a 1.2
// host (abi_minor() >= 2); an older one answers them with an error.

fn num(n: i64) -> Json {
    Json::Num(n as f64)
}

fn strs(list: &[&str]) -> Json {
    Json::Arr(list.iter().map(|x| s(x)).collect())
}

fn get_string(r: &Json, key: &str) -> String {
    r.get(key).as_str().unwrap_or("").to_string()
}

fn get_opt_string(r: &Json, key: &str) -> Option<String> {
    r.get(key).as_str().map(String::from)
}

fn unit(method: &str, params: Json) -> Result<(), String> {
    host_call(method, &params).map(|_| ())
}

/// A dialog's answer: value None with reason "cancelled", "timeout" or
/// "no-ui".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dialog {
    pub value: Option<String>,
    pub reason: String,
}

fn dialog(method: &str, params: Json) -> Result<Dialog, String> {
    let r = host_call(method, &params)?;
    Ok(Dialog { value: get_opt_string(&r, "value"), reason: get_string(&r, "reason") })
}

fn with_ms(mut m: Vec<(&'static str, Json)>, timeout_ms: u64) -> Json {
    if timeout_ms > 0 {
        m.push(("timeoutMs", Json::Num(timeout_ms as f64)));
    }
    obj(m)
}

#[doc(hidden)]
pub fn select_params(title: &str, options: &[&str], timeout_ms: u64) -> Json {
    with_ms(vec![("title", s(title)), ("options", strs(options))], timeout_ms)
}

/// Asks the person to choose one of options; the value is the option.
pub fn select(title: &str, options: &[&str], timeout_ms: u64) -> Result<Dialog, String> {
    dialog("ui.select", select_params(title, options, timeout_ms))
}

#[doc(hidden)]
pub fn input_params(title: &str, placeholder: &str, timeout_ms: u64) -> Json {
    let mut m = vec![("title", s(title))];
    opt(&mut m, "placeholder", placeholder);
    with_ms(m, timeout_ms)
}

/// Asks the person for one line.
pub fn input(title: &str, placeholder: &str, timeout_ms: u64) -> Result<Dialog, String> {
    dialog("ui.input", input_params(title, placeholder, timeout_ms))
}

#[doc(hidden)]
pub fn editor_params(title: &str, prefill: &str, timeout_ms: u64) -> Json {
    let mut m = vec![("title", s(title))];
    opt(&mut m, "prefill", prefill);
    with_ms(m, timeout_ms)
}

/// Asks the person for a text of several lines.
pub fn editor(title: &str, prefill: &str, timeout_ms: u64) -> Result<Dialog, String> {
    dialog("ui.editor", editor_params(title, prefill, timeout_ms))
}

#[doc(hidden)]
pub fn set_status_params(key: &str, text: Option<&Line>) -> Json {
    obj(vec![("key", s(key)), ("text", text.map(Line::to_json).unwrap_or(Json::Null))])
}

/// Sets this extension's status key (None clears it): shown on the status
/// line after pi's own.
pub fn set_status(key: &str, text: Option<&Line>) -> Result<(), String> {
    unit("ui.setStatus", set_status_params(key, text))
}

/// Widget placements.
pub const ABOVE_EDITOR: &str = "aboveEditor";
pub const BELOW_EDITOR: &str = "belowEditor";

#[doc(hidden)]
pub fn set_widget_params(key: &str, lines: Option<&[Line]>, placement: &str) -> Json {
    let mut m = vec![("key", s(key)), ("lines", lines.map(lines_json).unwrap_or(Json::Null))];
    opt(&mut m, "placement", placement);
    obj(m)
}

/// Shows lines (at most 10) above or below the editor under key; None
/// removes the widget. placement "": above.
pub fn set_widget(key: &str, lines: Option<&[Line]>, placement: &str) -> Result<(), String> {
    unit("ui.setWidget", set_widget_params(key, lines, placement))
}

/// Sets the terminal's title (at most 100 characters).
pub fn set_title(title: &str) -> Result<(), String> {
    unit("ui.setTitle", obj(vec![("title", s(title))]))
}

/// Sets the text shown while the model works (None: pi's own).
pub fn set_working_message(text: Option<&str>) -> Result<(), String> {
    unit("ui.setWorkingMessage", obj(vec![("text", text.map(s).unwrap_or(Json::Null))]))
}

/// Replaces the text in pi's editor.
pub fn set_editor_text(text: &str) -> Result<(), String> {
    unit("ui.setEditorText", obj(vec![("text", s(text))]))
}

/// The editor's text ("" where there is no editor).
pub fn get_editor_text() -> Result<String, String> {
    Ok(get_string(&host_call("ui.getEditorText", &obj(vec![]))?, "text"))
}

/// Component slots.
pub const OVERLAY: &str = "overlay";
pub const WIDGET: &str = "widget";
pub const HEADER: &str = "header";
pub const FOOTER: &str = "footer";
pub const EDITOR: &str = "editor";

/// Where and how a component opens.
#[derive(Clone, Debug, Default)]
pub struct ComponentOptions {
    /// OVERLAY, WIDGET, HEADER, FOOTER or EDITOR.
    pub slot: String,
    /// Widgets: the widget's key.
    pub key: String,
    /// Widgets: ABOVE_EDITOR or BELOW_EDITOR.
    pub placement: String,
    /// Overlays: at most this many lines (0: half the screen).
    pub max_height: u32,
}

#[doc(hidden)]
pub fn component_params(o: &ComponentOptions) -> Json {
    let mut m = vec![("slot", s(&o.slot))];
    opt(&mut m, "key", &o.key);
    opt(&mut m, "placement", &o.placement);
    if o.max_height > 0 {
        m.push(("maxHeight", num(o.max_height as i64)));
    }
    obj(m)
}

/// Opens a component drawn by the extension (Extension::component_render,
/// component_input, component_dispose): Some(id), or None when pi's
/// terminal UI does not run (reason "no-tui").
pub fn component(o: &ComponentOptions) -> Result<Option<String>, String> {
    Ok(get_opt_string(&host_call("ui.component", &component_params(o))?, "id"))
}

/// Has pi render the component id again.
pub fn rerender(id: &str) -> Result<(), String> {
    unit("ui.rerender", obj(vec![("id", s(id))]))
}

/// Closes the component id (its dispose is called).
pub fn close(id: &str) -> Result<(), String> {
    unit("ui.close", obj(vec![("id", s(id))]))
}

/// What session_info answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionInfo {
    pub session_id: String,
    /// None with --no-session.
    pub session_file: Option<String>,
    pub name: Option<String>,
    pub leaf_id: String,
}

pub fn session_info() -> Result<SessionInfo, String> {
    let r = host_call("session.info", &obj(vec![]))?;
    Ok(SessionInfo {
        session_id: get_string(&r, "sessionId"),
        session_file: get_opt_string(&r, "sessionFile"),
        name: get_opt_string(&r, "name"),
        leaf_id: get_string(&r, "leafId"),
    })
}

fn entries(r: Json) -> Vec<Json> {
    r.get("entries").as_array().cloned().unwrap_or_default()
}

/// The entries from the root to the leaf (the last limit of them; 0: all),
/// as the session file holds them.
pub fn session_branch(limit: u32) -> Result<Vec<Json>, String> {
    let mut m = vec![];
    if limit > 0 {
        m.push(("limit", num(limit as i64)));
    }
    host_call("session.branch", &obj(m)).map(entries)
}

/// Every entry, in file order.
pub fn session_tree() -> Result<Vec<Json>, String> {
    host_call("session.tree", &obj(vec![])).map(entries)
}

/// Names the session.
pub fn session_set_name(name: &str) -> Result<(), String> {
    unit("session.setName", obj(vec![("name", s(name))]))
}

/// Labels an entry (None removes the label).
pub fn session_set_label(entry_id: &str, label: Option<&str>) -> Result<(), String> {
    unit("session.setLabel", obj(vec![("entryId", s(entry_id)), ("label", label.map(s).unwrap_or(Json::Null))]))
}

/// How full the context is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextUsage {
    pub tokens: Option<i64>,
    pub context_window: i64,
    pub percent: Option<f64>,
}

pub fn context_usage() -> Result<ContextUsage, String> {
    let r = host_call("session.contextUsage", &obj(vec![]))?;
    Ok(ContextUsage {
        tokens: r.get("tokens").as_f64().map(|n| n as i64),
        context_window: r.get("contextWindow").as_f64().unwrap_or(0.0) as i64,
        percent: r.get("percent").as_f64(),
    })
}

/// Asks for a compaction (done when pi is idle).
pub fn session_compact(custom_instructions: &str) -> Result<(), String> {
    let mut m = vec![];
    opt(&mut m, "customInstructions", custom_instructions);
    unit("session.compact", obj(m))
}

fn cancelled(method: &str, params: Json) -> Result<bool, String> {
    Ok(host_call(method, &params)?.get("cancelled").as_bool() == Some(true))
}

/// Starts a new session (a command or shortcut only); true when a
/// session_before_switch hook cancelled it.
pub fn session_new() -> Result<bool, String> {
    cancelled("session.new", obj(vec![]))
}

/// Switches to the session file session_path (a command or shortcut only).
pub fn session_switch(session_path: &str) -> Result<bool, String> {
    cancelled("session.switch", obj(vec![("sessionPath", s(session_path))]))
}

/// Forks the session at entry_id (a command or shortcut only).
pub fn session_fork(entry_id: &str) -> Result<bool, String> {
    cancelled("session.fork", obj(vec![("entryId", s(entry_id))]))
}

/// Moves the leaf to target_id, first summarizing the branch left when
/// summarize is set (a command or shortcut only).
pub fn session_navigate(target_id: &str, summarize: bool) -> Result<bool, String> {
    let mut m = vec![("targetId", s(target_id))];
    if summarize {
        m.push(("summarize", Json::Bool(true)));
    }
    cancelled("session.navigate", obj(m))
}

/// How a message sent during a run is delivered ("": the default).
pub const STEER: &str = "steer";
pub const FOLLOW_UP: &str = "followUp";
pub const NEXT_TURN: &str = "nextTurn";

#[doc(hidden)]
pub fn send_user_message_params(text: &str, blocks: &[Block], deliver_as: &str) -> Json {
    let content = if blocks.is_empty() { s(text) } else { blocks_json(blocks) };
    let mut m = vec![("content", content)];
    opt(&mut m, "deliverAs", deliver_as);
    obj(m)
}

/// Sends text as the user's message: idle, it starts a run once the
/// current call returns; in a run it is queued as STEER (the default) or
/// FOLLOW_UP.
pub fn send_user_message(text: &str, deliver_as: &str) -> Result<(), String> {
    unit("agent.sendUserMessage", send_user_message_params(text, &[], deliver_as))
}

/// send_user_message with content blocks (text and images).
pub fn send_user_blocks(blocks: &[Block], deliver_as: &str) -> Result<(), String> {
    unit("agent.sendUserMessage", send_user_message_params("", blocks, deliver_as))
}

/// A custom message (a custom_message entry the model sees as a user
/// message).
#[derive(Clone, Debug, Default)]
pub struct Message {
    pub custom_type: String,
    /// The content as one string, unless blocks is not empty.
    pub text: String,
    pub blocks: Vec<Block>,
    /// Show it in the transcript.
    pub display: bool,
    /// JSON for a message renderer (Null: none).
    pub details: Json,
    /// Idle: start a run.
    pub trigger_turn: bool,
    /// STEER (default), FOLLOW_UP or NEXT_TURN.
    pub deliver_as: String,
}

#[doc(hidden)]
pub fn send_message_params(msg: &Message) -> Json {
    let content = if msg.blocks.is_empty() { s(&msg.text) } else { blocks_json(&msg.blocks) };
    let mut m = vec![("customType", s(&msg.custom_type)), ("content", content)];
    if msg.display {
        m.push(("display", Json::Bool(true)));
    }
    if !msg.details.is_null() {
        m.push(("details", msg.details.clone()));
    }
    if msg.trigger_turn {
        m.push(("triggerTurn", Json::Bool(true)));
    }
    opt(&mut m, "deliverAs", &msg.deliver_as);
    obj(m)
}

/// Adds a custom message to the conversation.
pub fn send_message(msg: &Message) -> Result<(), String> {
    unit("agent.sendMessage", send_message_params(msg))
}

/// Stops the current run.
pub fn abort() -> Result<(), String> {
    unit("agent.abort", obj(vec![]))
}

/// What agent_state answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentState {
    pub idle: bool,
    pub pending_messages: i64,
    pub system_prompt: String,
}

pub fn agent_state() -> Result<AgentState, String> {
    let r = host_call("agent.state", &obj(vec![]))?;
    Ok(AgentState {
        idle: r.get("idle").as_bool() == Some(true),
        pending_messages: r.get("pendingMessages").as_f64().unwrap_or(0.0) as i64,
        system_prompt: get_string(&r, "systemPrompt"),
    })
}

/// One tool as tools_list answers it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub source: String,
    pub active: bool,
}

pub fn tools_list() -> Result<Vec<ToolInfo>, String> {
    let r = host_call("tools.list", &obj(vec![]))?;
    let list = r.get("tools").as_array().cloned().unwrap_or_default();
    Ok(list
        .iter()
        .map(|t| ToolInfo {
            name: get_string(t, "name"),
            description: get_string(t, "description"),
            source: get_string(t, "source"),
            active: t.get("active").as_bool() == Some(true),
        })
        .collect())
}

/// Makes names the active tools from the next model request.
pub fn tools_set_active(names: &[&str]) -> Result<(), String> {
    unit("tools.setActive", obj(vec![("names", strs(names))]))
}

/// Adds tools (ToolSpec objects, as in the declaration), active at once;
/// their calls reach Extension::execute.
pub fn tools_register(specs: &[Json]) -> Result<(), String> {
    unit("tools.register", obj(vec![("tools", Json::Arr(specs.to_vec()))]))
}

/// Removes tools this extension registered.
pub fn tools_unregister(names: &[&str]) -> Result<(), String> {
    unit("tools.unregister", obj(vec![("names", strs(names))]))
}

/// What model_get answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInfo {
    pub provider: String,
    pub id: String,
    pub context_window: i64,
    pub thinking_level: String,
}

pub fn model_get() -> Result<ModelInfo, String> {
    let r = host_call("model.get", &obj(vec![]))?;
    Ok(ModelInfo {
        provider: get_string(&r, "provider"),
        id: get_string(&r, "id"),
        context_window: r.get("contextWindow").as_f64().unwrap_or(0.0) as i64,
        thinking_level: get_string(&r, "thinkingLevel"),
    })
}

/// The models pi knows, as (provider, id).
pub fn model_list() -> Result<Vec<(String, String)>, String> {
    let r = host_call("model.list", &obj(vec![]))?;
    let list = r.get("models").as_array().cloned().unwrap_or_default();
    Ok(list.iter().map(|m| (get_string(m, "provider"), get_string(m, "id"))).collect())
}

/// Switches the model (grants.model); provider "" keeps pi's choice.
pub fn model_set(provider: &str, id: &str) -> Result<(), String> {
    let mut m = vec![];
    opt(&mut m, "provider", provider);
    m.push(("id", s(id)));
    unit("model.set", obj(m))
}

/// Sets the thinking level (off, minimal, low, medium, high, xhigh;
/// grants.model) and returns the level applied.
pub fn set_thinking_level(level: &str) -> Result<String, String> {
    Ok(get_string(&host_call("model.setThinkingLevel", &obj(vec![("level", s(level))]))?, "level"))
}

/// A request to the configured model (grants.llm; counts against
/// limits.llm_tokens): messages are (role, text) with role "user" or
/// "assistant".
#[derive(Clone, Debug, Default)]
pub struct LlmRequest {
    pub system_prompt: String,
    pub messages: Vec<(String, String)>,
    /// 0: the model's default.
    pub max_tokens: u32,
}

/// The model's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlmResponse {
    pub content: Vec<Block>,
    pub stop_reason: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

impl LlmResponse {
    /// The text blocks joined by newlines.
    pub fn text(&self) -> String {
        let t: Vec<&str> = self.content.iter().filter_map(|b| if let Block::Text(t) = b { Some(t.as_str()) } else { None }).collect();
        t.join("\n")
    }
}

#[doc(hidden)]
pub fn llm_params(r: &LlmRequest) -> Json {
    let mut m = vec![];
    opt(&mut m, "systemPrompt", &r.system_prompt);
    let msgs = r.messages.iter().map(|(role, text)| obj(vec![("role", s(role)), ("content", s(text))])).collect();
    m.push(("messages", Json::Arr(msgs)));
    if r.max_tokens > 0 {
        m.push(("maxTokens", num(r.max_tokens as i64)));
    }
    obj(m)
}

/// Sends the system prompt and messages, no tools, to the configured
/// model; nothing is saved or shown.
pub fn llm_complete(r: &LlmRequest) -> Result<LlmResponse, String> {
    let a = host_call("llm.complete", &llm_params(r))?;
    let content = a.get("content").as_array().map(|c| c.iter().filter_map(Block::from_json).collect()).unwrap_or_default();
    Ok(LlmResponse {
        content,
        stop_reason: get_string(&a, "stopReason"),
        input_tokens: a.get("usage").get("input").as_f64().unwrap_or(0.0) as i64,
        output_tokens: a.get("usage").get("output").as_f64().unwrap_or(0.0) as i64,
    })
}

/// The extension's flags as a JSON object {NAME: value}: as given on the
/// command line, else their default, else false (booleans) or null.
pub fn flags_get() -> Result<Json, String> {
    Ok(host_call("flags.get", &obj(vec![]))?.get("flags").clone())
}

/// Starts a timer of ms (at least 10) milliseconds and returns its id;
/// Extension::timer is called when it fires.
pub fn timer_set(ms: u64, repeat: bool) -> Result<String, String> {
    let mut m = vec![("ms", Json::Num(ms as f64))];
    if repeat {
        m.push(("repeat", Json::Bool(true)));
    }
    Ok(get_string(&host_call("timer.set", &obj(m))?, "id"))
}

/// Stops a timer.
pub fn timer_clear(id: &str) -> Result<(), String> {
    unit("timer.clear", obj(vec![("id", s(id))]))
}

/// Watches path (in the extension's fs grants) and returns the watch's id;
/// Extension::watch gets the changed paths.
pub fn watch_add(path: &str, recursive: bool) -> Result<String, String> {
    let mut m = vec![("path", s(path))];
    if recursive {
        m.push(("recursive", Json::Bool(true)));
    }
    Ok(get_string(&host_call("watch.add", &obj(m))?, "id"))
}

/// Stops a watch.
pub fn watch_remove(id: &str) -> Result<(), String> {
    unit("watch.remove", obj(vec![("id", s(id))]))
}

/// Sends data on channel to every other extension that lists it.
pub fn bus_emit(channel: &str, data: &Json) -> Result<(), String> {
    unit("bus.emit", obj(vec![("channel", s(channel)), ("data", data.clone())]))
}

/// Ends pi when the command or shortcut returns.
pub fn shutdown() -> Result<(), String> {
    unit("pi.shutdown", obj(vec![]))
}

/// Loads every extension again when idle.
pub fn reload() -> Result<(), String> {
    unit("pi.reload", obj(vec![]))
}

// ---- ABI 1.2 guest answers ---------------------------------------------------

/// What a component does with a key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyResult {
    /// The key was used (false: the editor slot hands it to pi's editor).
    pub consumed: bool,
    /// Close the component.
    pub close: bool,
    /// Render it again.
    pub rerender: bool,
}

/// A user_bash hook's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum UserBash {
    Pass,
    /// Run this command instead.
    Replace(String),
    /// Run nothing; show the reason.
    Block(String),
    /// Run nothing; show this output as the command's.
    Result { output: String, exit_code: i32 },
}

/// A session_before_* hook's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionBefore {
    Pass,
    /// Stop the switch, fork, compaction or navigation.
    Cancel(String),
    /// compact and tree only: the summary pi uses without asking the model.
    Summary { summary: String, details: Json },
}

// ---- what init said (ABI 1.1) ------------------------------------------------

#[derive(Default)]
struct Facts {
    abi_minor: i64,
    trusted: bool,
    has_ui: bool,
    tui: bool,
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

/// Whether pi's terminal UI runs (ABI 1.2: components show only then;
/// false for an older host).
pub fn tui() -> bool {
    facts().tui
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
    /// (isError). For a whole result (images, details, progress,
    /// terminate) implement execute instead.
    fn tool(&mut self, name: &str, _input: &Json) -> Result<String, String> {
        Err(format!("unknown tool {}", name))
    }

    /// One tool call with its whole result; ctx.emit reports progress. By
    /// default, tool's text.
    fn execute(&mut self, ctx: &mut ToolContext, input: &Json) -> ToolOutput {
        let name = ctx.tool_name.clone();
        match self.tool(&name, input) {
            Ok(t) => ToolOutput::text(&t),
            Err(e) => ToolOutput::error(&e),
        }
    }

    /// The tool_result hook (declare "tool_result"): params are the
    /// finished call {"toolName", "toolCallId", "input", "content",
    /// "details", "isError"}. Some(patch) answers; None hands the hook to
    /// other (the default).
    fn tool_result(&mut self, _params: &Json) -> Option<ResultPatch> {
        None
    }

    /// The bash_spawn hook (declare "bash_spawn"): env holds the granted
    /// variables the command would get. Some(change) answers; None hands
    /// the hook to other (the default).
    fn bash_spawn(&mut self, _command: &str, _cwd: &str, _env: &Json) -> Option<BashSpawnChange> {
        None
    }

    /// An event (declare "event"): return true when handled; false (the
    /// default) hands it to other.
    fn event(&mut self, _event_type: &str, _event: &Json) -> bool {
        false
    }

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

    // ---- ABI 1.2: used only with a 1.2 host (abi_minor() >= 2) ----

    /// Draws a component opened with `component`, width columns wide.
    /// editor is the editor's text and cursor (rune offset) for an
    /// editor-slot component.
    fn component_render(&mut self, _id: &str, _width: usize, _editor: Option<(&str, usize)>) -> Vec<Line> {
        Vec::new()
    }

    /// A key for the focused component (an overlay or the editor slot):
    /// key as docs/abi.md names keys ("x", "ctrl+x", "enter", "paste" with
    /// text).
    fn component_input(&mut self, _id: &str, _key: &str, _text: &str) -> KeyResult {
        KeyResult::default()
    }

    /// The component went away: reason "closed", "cancelled", "replaced"
    /// or "shutdown".
    fn component_dispose(&mut self, _id: &str, _reason: &str) {}

    /// A tool declared with "render": true: params are {"toolName",
    /// "toolCallId", "args", "result"?, "isPartial", "expanded", "width"}.
    /// Some(lines) are drawn below pi's first line; None: pi's drawing.
    fn tool_render(&mut self, _params: &Json) -> Option<Vec<Line>> {
        None
    }

    /// A custom message of a type in "messageRenderers": params are
    /// {"customType", "content", "details", "expanded", "width"}.
    fn message_render(&mut self, _params: &Json) -> Option<Vec<Line>> {
        None
    }

    /// A key declared in "shortcuts" was pressed; an error is shown.
    fn shortcut(&mut self, key: &str) -> Result<(), String> {
        Err(format!("no shortcut {}", key))
    }

    /// A timer from timer_set fired.
    fn timer(&mut self, _id: &str) {}

    /// A watch from watch_add saw changes (absolute paths).
    fn watch(&mut self, _id: &str, _paths: &[String]) {}

    /// A message on a channel listed in "channels", from extension from.
    fn bus_message(&mut self, _channel: &str, _data: &Json, _from: &str) {}

    /// The context hook: the messages about to go to the model;
    /// Some(array) replaces them for that request.
    fn context(&mut self, _messages: &Json) -> Option<Json> {
        None
    }

    /// The before_provider_request hook: the JSON body pi is about to
    /// send; Some(object) replaces it (it needs grants.model).
    fn before_provider_request(&mut self, _payload: &Json) -> Option<Json> {
        None
    }

    /// The user_bash hook (a !COMMAND typed by the person).
    fn user_bash(&mut self, _command: &str, _cwd: &str) -> UserBash {
        UserBash::Pass
    }

    /// The session_before_switch, _fork, _compact and _tree hooks: which
    /// is "switch", "fork", "compact" or "tree".
    fn session_before(&mut self, _which: &str, _params: &Json) -> SessionBefore {
        SessionBefore::Pass
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
    let v12 = abi_minor() >= 2;
    let mut dropped = false;
    let mut dropped12 = false;
    let mut out = Vec::new();
    const HOOKS11: &[&str] = &["input", "before_agent_start", "stop"];
    const HOOKS12: &[&str] = &["context", "before_provider_request", "user_bash", "session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"];
    const EVENTS12: &[&str] = &["session_switch", "session_fork", "session_compact", "session_tree", "model_select"];
    const KEYS12: &[&str] = &["flags", "shortcuts", "messageRenderers", "channels"];
    let is = |v: &Json, list: &[&str]| v.as_str().map(|x| list.contains(&x)).unwrap_or(false);
    for (k, v) in members {
        let key = k.clone();
        match (key.as_str(), v) {
            ("commands", _) => return Err("declaration() has \"commands\": declare commands with Extension::commands".to_string()),
            ("configSchema", _) | ("events", _) if !v11 => dropped = true,
            (k12, _) if !v12 && KEYS12.contains(&k12) => dropped12 = true,
            ("hooks", Json::Arr(hooks)) if !v12 => {
                dropped12 |= hooks.iter().any(|h| is(h, HOOKS12));
                dropped |= !v11 && hooks.iter().any(|h| is(h, HOOKS11));
                let kept: Vec<Json> = hooks.into_iter().filter(|h| !is(h, HOOKS12) && (v11 || !is(h, HOOKS11))).collect();
                out.push((k, Json::Arr(kept)));
            }
            ("events", Json::Arr(events)) if !v12 => {
                let n = events.len();
                let kept: Vec<Json> = events.into_iter().filter(|e| !is(e, EVENTS12)).collect();
                dropped12 |= kept.len() != n;
                out.push((k, Json::Arr(kept)));
            }
            ("tools", Json::Arr(tools)) if !v12 => {
                let kept = tools
                    .into_iter()
                    .map(|t| match t {
                        Json::Obj(m) => {
                            let n = m.len();
                            let m: Vec<(String, Json)> = m.into_iter().filter(|(tk, _)| tk != "render").collect();
                            dropped12 |= m.len() != n;
                            Json::Obj(m)
                        }
                        other => other,
                    })
                    .collect();
                out.push((k, Json::Arr(kept)));
            }
            ("wants", Json::Obj(wants)) if !v12 => {
                dropped12 |= wants.iter().any(|(w, _)| w == "llm" || w == "model");
                dropped |= !v11 && wants.iter().any(|(w, _)| w == "http" || w == "tools");
                let kept: Vec<(String, Json)> = wants.into_iter().filter(|(w, _)| w != "llm" && w != "model" && (v11 || (w != "http" && w != "tools"))).collect();
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
    if dropped12 {
        log(WARN, &format!("this extension uses ABI 1.2 (flags, shortcuts, renderers, channels, 1.2 hooks or events, llm or model wants), but the host speaks ABI 1.{}: those parts stay unused", abi_minor()));
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
    f.tui = params.get("tui").as_bool() == Some(true);
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
            let mut ctx = ToolContext { tool_name: text("toolName"), tool_call_id: text("toolCallId"), cwd: text("cwd"), cancelled: false };
            ok_json(ext.execute(&mut ctx, params.get("input")).to_json(true))
        }
        "hook.tool_result" | "hook.bash_spawn" | "event" => {
            let handled = match method {
                "hook.tool_result" => ext.tool_result(params).map(|p| {
                    let mut m = vec![];
                    if let Some(c) = p.content {
                        m.push(("content", blocks_json(&c)));
                    }
                    if let Some(d) = p.details {
                        m.push(("details", d));
                    }
                    if let Some(e) = p.is_error {
                        m.push(("isError", Json::Bool(e)));
                    }
                    obj(m)
                }),
                "hook.bash_spawn" => ext.bash_spawn(&text("command"), &text("cwd"), params.get("env")).map(|c| {
                    let mut m = vec![];
                    opt(&mut m, "command", &c.command);
                    opt(&mut m, "cwd", &c.cwd);
                    if let Some(env) = c.env {
                        m.push(("env", Json::Obj(env.into_iter().map(|(k, v)| (k, Json::Str(v))).collect())));
                    }
                    obj(m)
                }),
                _ => {
                    if ext.event(&text("type"), params) {
                        Some(obj(vec![]))
                    } else {
                        None
                    }
                }
            };
            match handled {
                Some(v) => ok_json(v),
                None => match ext.other(method, params) {
                    Ok(v) => ok(&v.to_json()),
                    Err(e) => fail(&e),
                },
            }
        }
        "component.render" => {
            let ed = params.get("editor");
            let cursor = ed.get("cursor").as_f64().unwrap_or(0.0) as usize;
            let editor = ed.get("text").as_str().map(|t| (t, cursor));
            let width = params.get("width").as_f64().unwrap_or(0.0) as usize;
            let lines = ext.component_render(&text("id"), width, editor);
            ok_json(obj(vec![("lines", lines_json(&lines))]))
        }
        "component.input" => {
            let r = ext.component_input(&text("id"), &text("key"), &text("text"));
            let mut m = vec![];
            for (k, v) in [("consumed", r.consumed), ("close", r.close), ("rerender", r.rerender)] {
                if v {
                    m.push((k, Json::Bool(true)));
                }
            }
            ok_json(obj(m))
        }
        "component.dispose" => {
            ext.component_dispose(&text("id"), &text("reason"));
            ok("{}")
        }
        "tool.render" | "message.render" => {
            let lines = if method == "tool.render" { ext.tool_render(params) } else { ext.message_render(params) };
            match lines {
                Some(l) => ok_json(obj(vec![("lines", lines_json(&l))])),
                None => ok("{}"),
            }
        }
        "shortcut.execute" => match ext.shortcut(&text("key")) {
            Ok(()) => ok("{}"),
            Err(e) => fail(&e),
        },
        "timer.fire" => {
            ext.timer(&text("id"));
            ok("{}")
        }
        "watch.fire" => {
            let paths: Vec<String> = params.get("paths").as_array().map(|a| a.iter().filter_map(|p| p.as_str().map(String::from)).collect()).unwrap_or_default();
            ext.watch(&text("id"), &paths);
            ok("{}")
        }
        "bus.message" => {
            ext.bus_message(&text("channel"), params.get("data"), &text("from"));
            ok("{}")
        }
        "hook.context" => match ext.context(params.get("messages")) {
            None => ok("{}"),
            Some(m @ Json::Arr(_)) => ok_json(obj(vec![("messages", m)])),
            Some(_) => fail("the context hook's messages are not a JSON array"),
        },
        "hook.before_provider_request" => match ext.before_provider_request(params.get("payload")) {
            None => ok("{}"),
            Some(p @ Json::Obj(_)) => ok_json(obj(vec![("payload", p)])),
            Some(_) => fail("the before_provider_request hook's payload is not a JSON object"),
        },
        "hook.user_bash" => match ext.user_bash(&text("command"), &text("cwd")) {
            UserBash::Pass => ok("{}"),
            UserBash::Replace(c) => ok_json(obj(vec![("command", s(&c))])),
            UserBash::Block(r) => ok_json(obj(vec![("block", Json::Bool(true)), ("reason", s(&r))])),
            UserBash::Result { output, exit_code } => {
                ok_json(obj(vec![("result", obj(vec![("output", s(&output)), ("exitCode", num(exit_code as i64))]))]))
            }
        },
        m if m.starts_with("hook.session_before_") => {
            let which = &m["hook.session_before_".len()..];
            match ext.session_before(which, params) {
                SessionBefore::Pass => ok("{}"),
                SessionBefore::Cancel(r) => {
                    let mut a = vec![("cancel", Json::Bool(true))];
                    opt(&mut a, "reason", &r);
                    ok_json(obj(a))
                }
                SessionBefore::Summary { summary, details } if which == "compact" || which == "tree" => {
                    let mut a = vec![("summary", s(&summary))];
                    if !details.is_null() {
                        a.push(("details", details));
                    }
                    ok_json(obj(vec![(if which == "compact" { "compaction" } else { "summary" }, obj(a))]))
                }
                SessionBefore::Summary { .. } => fail(&format!("a session_before_{} hook cannot give a summary", which)),
            }
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
