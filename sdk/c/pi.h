/*
 * pi.h — the guest side of pi's extension ABI v1 for C, in one header.
 *
 * It defines the exports pi calls (pi_abi_v1, pi_alloc, pi_free, pi_call),
 * an allocator (wasi-libc's malloc), a small JSON reader for requests and
 * config, a JSON writer for answers, and the request dispatch. An
 * extension includes it in exactly one .c file and defines one constant,
 * pi_ext, saying what it declares and which functions handle tools and
 * hooks:
 *
 *     #include "pi.h"
 *
 *     static int tool(const char *name, pi_json input, pi_buf *out) {
 *         pi_buf_cstr(out, "Hello!");   // the result's text
 *         return 0;                     // 1 answers it as an error
 *     }
 *
 *     const pi_extension pi_ext = {
 *         .declaration = "{\"name\":\"hello\",\"version\":\"0.1.0\","
 *                        "\"tools\":[{\"name\":\"hello\",\"description\":\"Say hello.\","
 *                        "\"parameters\":{\"type\":\"object\",\"properties\":{}}}]}",
 *         .tool = tool,
 *     };
 *
 * Build it as a WASI reactor (pi calls _initialize, never _start):
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-debug -o hello.wasm hello.c
 *
 * (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32.)
 *
 * ABI 1.1 is here too: the host calls (pi_kv_get, pi_kv_set, pi_http,
 * pi_tool_call, pi_notify, pi_confirm, pi_session_append, pi_exec, ...),
 * the facts of init (pi_abi_minor, pi_mode, ...), commands (pi_ext.commands),
 * the input, before_agent_start and stop hooks, and asks (PI_ASK). pi.h
 * leaves the 1.1 parts out of init's answer for a 1.0 host.
 * The wire contract is docs/abi.md in pi's source tree; this header
 * follows it: requests are parsed as real JSON (never searched as text),
 * answers are written with every string escaped.
 *
 * Shipped by pi (`pi ext new NAME --lang c` copies it next to your
 * source); it is the file sdk/c/pi.h of pi's source tree.
 */
#ifndef PI_H
#define PI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_EXPORT(name) __attribute__((export_name(name)))
#define PI_IMPORT(name) __attribute__((import_module("pi"), import_name(name)))

/* ---- host imports ------------------------------------------------------ */

PI_IMPORT("log") void pi_host_log(int32_t level, const char *ptr, int32_t len);
/* host_call and host_take are imported below, with the host calls. */

/* Log levels of pi_log. */
enum { PI_TRACE = 0, PI_DEBUG = 1, PI_INFO = 2, PI_WARN = 3, PI_ERROR = 4 };

/* pi_log writes one line to pi's log under ext.NAME (printf format). */
static void pi_log(int level, const char *fmt, ...) {
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0) return;
	if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
	pi_host_log(level, line, n);
}

/* ---- JSON reader -------------------------------------------------------- */

/*
 * A pi_json is one JSON value: its text inside a larger document that was
 * checked whole before (pi_call checks every request). A missing value
 * (pi_json_get of an absent key) has p == NULL; every function accepts it.
 */
typedef struct {
	const char *p;
	size_t n;
} pi_json;

/* Kinds, as pi_json_kind returns them. */
enum { PI_ABSENT = 0, PI_NULL, PI_BOOL, PI_NUMBER, PI_STRING, PI_ARRAY, PI_OBJECT };

#define PI_JSON_MAX_DEPTH 128

static size_t pi__ws(const char *p, size_t n, size_t i) {
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
	return i;
}

/* pi__value returns the index just past the value starting at i (after
 * white space), or (size_t)-1 when it is not valid JSON. */
static size_t pi__value(const char *p, size_t n, size_t i, int depth) {
	const size_t bad = (size_t)-1;
	if (depth > PI_JSON_MAX_DEPTH) return bad;
	i = pi__ws(p, n, i);
	if (i >= n) return bad;
	char c = p[i];
	if (c == '"') {
		for (i++; i < n; i++) {
			unsigned char ch = (unsigned char)p[i];
			if (ch == '"') return i + 1;
			if (ch < 0x20) return bad;
			if (ch == '\\') {
				if (++i >= n) return bad;
				switch (p[i]) {
				case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
				case 'u':
					for (int k = 0; k < 4; k++) {
						char h = ++i < n ? p[i] : 0;
						if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) return bad;
					}
					break;
				default: return bad;
				}
			}
		}
		return bad;
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		i = pi__ws(p, n, i + 1);
		if (i < n && p[i] == close) return i + 1;
		for (;;) {
			if (c == '{') {
				i = pi__ws(p, n, i);
				if (i >= n || p[i] != '"') return bad;
				i = pi__value(p, n, i, depth + 1);
				if (i == bad) return bad;
				i = pi__ws(p, n, i);
				if (i >= n || p[i] != ':') return bad;
				i++;
			}
			i = pi__value(p, n, i, depth + 1);
			if (i == bad) return bad;
			i = pi__ws(p, n, i);
			if (i < n && p[i] == ',') { i++; continue; }
			if (i < n && p[i] == close) return i + 1;
			return bad;
		}
	}
	if (n - i >= 4 && memcmp(p + i, "true", 4) == 0) return i + 4;
	if (n - i >= 5 && memcmp(p + i, "false", 5) == 0) return i + 5;
	if (n - i >= 4 && memcmp(p + i, "null", 4) == 0) return i + 4;
	/* a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	size_t s = i;
	if (i < n && p[i] == '-') i++;
	if (i < n && p[i] == '0') i++;
	else if (i < n && p[i] >= '1' && p[i] <= '9') while (i < n && p[i] >= '0' && p[i] <= '9') i++;
	else return bad;
	if (i < n && p[i] == '.') {
		size_t d = ++i;
		while (i < n && p[i] >= '0' && p[i] <= '9') i++;
		if (i == d) return bad;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-')) i++;
		size_t d = i;
		while (i < n && p[i] >= '0' && p[i] <= '9') i++;
		if (i == d) return bad;
	}
	return i > s ? i : bad;
}

/* pi_json_parse checks that p[0..n) is exactly one JSON value (white space
 * around it allowed) and returns it; p == NULL when it is not. */
static pi_json pi_json_parse(const char *p, size_t n) {
	pi_json v = {NULL, 0};
	size_t end = pi__value(p, n, 0, 0);
	if (end == (size_t)-1 || pi__ws(p, n, end) != n) return v;
	size_t start = pi__ws(p, n, 0);
	v.p = p + start;
	v.n = end - start;
	return v;
}

static int pi_json_kind(pi_json v) {
	if (v.p == NULL || v.n == 0) return PI_ABSENT;
	switch (v.p[0]) {
	case 'n': return PI_NULL;
	case 't': case 'f': return PI_BOOL;
	case '"': return PI_STRING;
	case '[': return PI_ARRAY;
	case '{': return PI_OBJECT;
	}
	return PI_NUMBER;
}

static unsigned pi__hex4(const char *p) {
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		char h = p[k];
		v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
	}
	return v;
}

static size_t pi__utf8(char *out, unsigned cp) {
	if (cp < 0x80) { out[0] = (char)cp; return 1; }
	if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* pi_json_str returns a string value unescaped, NUL-terminated, in memory
 * from malloc (free it), with *len its length (a string may hold NUL);
 * NULL when v is not a string or memory ran out. */
static char *pi_json_str_len(pi_json v, size_t *len) {
	if (pi_json_kind(v) != PI_STRING) return NULL;
	char *out = malloc(v.n); /* unescaping never grows the text */
	if (!out) return NULL;
	size_t o = 0;
	for (size_t i = 1; i + 1 < v.n; i++) {
		char c = v.p[i];
		if (c != '\\') { out[o++] = c; continue; }
		c = v.p[++i];
		switch (c) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			unsigned cp = pi__hex4(v.p + i + 1);
			i += 4;
			if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < v.n && v.p[i + 1] == '\\' && v.p[i + 2] == 'u') {
				unsigned lo = pi__hex4(v.p + i + 3);
				if (lo >= 0xDC00 && lo < 0xE000) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					i += 6;
				}
			}
			if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD; /* a lone surrogate */
			o += pi__utf8(out + o, cp);
			break;
		}
		default: out[o++] = c; /* " \ / */
		}
	}
	out[o] = 0;
	if (len) *len = o;
	return out;
}

static char *pi_json_str(pi_json v) { return pi_json_str_len(v, NULL); }

/* pi_json_eq reports whether v is the string s. */
static int pi_json_eq(pi_json v, const char *s) {
	size_t n;
	char *got = pi_json_str_len(v, &n);
	int eq = got && n == strlen(s) && memcmp(got, s, n) == 0;
	free(got);
	return eq;
}

/* pi_json_next steps over one element of an array or object: *i starts at
 * 0 and is advanced; the element (for an object, its value, with the key
 * in *key) goes to *out. It returns 0 at the end. */
static int pi_json_next(pi_json v, size_t *i, pi_json *key, pi_json *out) {
	int kind = pi_json_kind(v);
	if (kind != PI_ARRAY && kind != PI_OBJECT) return 0;
	size_t j = *i == 0 ? 1 : *i;
	j = pi__ws(v.p, v.n, j);
	if (j < v.n && v.p[j] == ',') j = pi__ws(v.p, v.n, j + 1);
	if (j >= v.n || v.p[j] == ']' || v.p[j] == '}') return 0;
	if (kind == PI_OBJECT) {
		size_t k = pi__value(v.p, v.n, j, 0);
		if (key) { key->p = v.p + j; key->n = k - j; }
		j = pi__ws(v.p, v.n, k) + 1; /* past ':' */
	}
	j = pi__ws(v.p, v.n, j);
	size_t end = pi__value(v.p, v.n, j, 0);
	out->p = v.p + j;
	out->n = end - j;
	*i = end;
	return 1;
}

/* pi_json_get returns the value of key in object obj (absent when obj is
 * not an object or has no such key; the last one when written twice). */
static pi_json pi_json_get(pi_json obj, const char *key) {
	pi_json found = {NULL, 0}, k, v;
	size_t i = 0;
	while (pi_json_next(obj, &i, &k, &v))
		if (pi_json_eq(k, key)) found = v;
	return found;
}

/* pi_json_at returns element idx of an array (absent past its end). */
static pi_json pi_json_at(pi_json arr, size_t idx) {
	pi_json v = {NULL, 0};
	size_t i = 0;
	if (pi_json_kind(arr) != PI_ARRAY) return v;
	for (size_t k = 0; pi_json_next(arr, &i, NULL, &v); k++)
		if (k == idx) return v;
	v.p = NULL;
	v.n = 0;
	return v;
}

/* pi_json_len is the number of elements of an array or members of an
 * object (0 for anything else). */
static size_t pi_json_len(pi_json v) {
	size_t i = 0, k = 0;
	pi_json e;
	while (pi_json_next(v, &i, NULL, &e)) k++;
	return k;
}

/* pi_json_num stores a number value in *out; it returns 0 when v is not a
 * number. */
static int pi_json_num(pi_json v, double *out) {
	if (pi_json_kind(v) != PI_NUMBER) return 0;
	char tmp[64];
	if (v.n >= sizeof tmp) return 0;
	memcpy(tmp, v.p, v.n);
	tmp[v.n] = 0;
	*out = strtod(tmp, NULL);
	return 1;
}

/* pi_json_true reports whether v is the boolean true. */
static int pi_json_true(pi_json v) { return pi_json_kind(v) == PI_BOOL && v.p[0] == 't'; }

/* ---- JSON writer -------------------------------------------------------- */

/* A pi_buf is a growing text buffer (memory from malloc). On out of
 * memory it stops growing and sets oom; pi_call then answers an error. */
typedef struct {
	char *p;
	size_t n, cap;
	int oom;
} pi_buf;

static void pi_buf_raw(pi_buf *b, const char *s, size_t n) {
	if (b->oom) return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1) cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) { b->oom = 1; return; }
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

/* pi_buf_cstr appends s as it is (text, or JSON you wrote yourself). */
static void pi_buf_cstr(pi_buf *b, const char *s) { pi_buf_raw(b, s, strlen(s)); }

/* pi_buf_printf appends printf-formatted text. */
static void pi_buf_printf(pi_buf *b, const char *fmt, ...) {
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) return;
	if ((size_t)n < sizeof small) { pi_buf_raw(b, small, (size_t)n); return; }
	char *big = malloc((size_t)n + 1);
	if (!big) { b->oom = 1; return; }
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	pi_buf_raw(b, big, (size_t)n);
	free(big);
}

/* pi__utf8_seq returns the length of the valid UTF-8 sequence that starts
 * at s (n bytes left), or 0 when the byte at s starts none. Validity is
 * Go's: an overlong form, a surrogate (U+D800..U+DFFF) or a code point past
 * U+10FFFF is invalid, and so is a sequence cut short. */
static size_t pi__utf8_seq(const unsigned char *s, size_t n) {
	unsigned char c = s[0];
	if (c < 0x80) return 1;
	if (c < 0xC2 || c > 0xF4) return 0;
	size_t k = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
	if (n < k) return 0;
	for (size_t j = 1; j < k; j++)
		if ((s[j] & 0xC0) != 0x80) return 0;
	if (c == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
	if (c == 0xED && s[1] >= 0xA0) return 0; /* a surrogate */
	if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
	if (c == 0xF4 && s[1] >= 0x90) return 0; /* past U+10FFFF */
	return k;
}

/* pi_utf8_valid reports whether s[0..n) is valid UTF-8. */
static int pi_utf8_valid(const char *s, size_t n) {
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0, k; i < n; i += k)
		if ((k = pi__utf8_seq(u + i, n - i)) == 0) return 0;
	return 1;
}

/* pi_buf_json_strn appends s[0..n) as a quoted JSON string. It is the one
 * place pi.h escapes a string, for answers and host calls alike, and it
 * writes the very bytes Go's encoding/json writes (pi's host and Go SDK):
 * \" \\ \b \f \n \r \t; other control characters as \u00XX; <, > and & as
 * \u003c, \u003e, \u0026; U+2028 and U+2029 as \u2028, \u2029; each byte
 * that is not part of valid UTF-8 as \ufffd (what a Go reader would make
 * of it). A NUL inside s[0..n) is written as \u0000. */
static void pi_buf_json_strn(pi_buf *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t run = 0; /* start of the bytes copied as they are */
	pi_buf_raw(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		const char *esc = NULL;
		char ux[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
		size_t step = 1;
		if (c >= 0x80) {
			step = pi__utf8_seq(u + i, n - i);
			if (step == 0) {
				esc = "\\ufffd";
				step = 1;
			} else if (step == 3 && c == 0xE2 && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) {
				esc = u[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
			}
		} else {
			switch (c) {
			case '"': esc = "\\\""; break;
			case '\\': esc = "\\\\"; break;
			case '\b': esc = "\\b"; break;
			case '\f': esc = "\\f"; break;
			case '\n': esc = "\\n"; break;
			case '\r': esc = "\\r"; break;
			case '\t': esc = "\\t"; break;
			case '<': case '>': case '&': esc = ux; break;
			default: if (c < 0x20) esc = ux;
			}
		}
		if (esc) {
			pi_buf_raw(b, s + run, i - run);
			pi_buf_raw(b, esc, esc == ux ? 6 : strlen(esc));
			run = i + step;
		}
		i += step;
	}
	pi_buf_raw(b, s + run, n - run);
	pi_buf_raw(b, "\"", 1);
}

static void pi_buf_json_str(pi_buf *b, const char *s) { pi_buf_json_strn(b, s, strlen(s)); }

static void pi_buf_free(pi_buf *b) {
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
	b->oom = 0;
}

/* pi__buf_reset empties b, keeping its memory. */
static void pi__buf_reset(pi_buf *b) {
	b->n = 0;
	b->oom = 0;
	if (b->p) b->p[0] = 0;
}

/* pi_buf_json appends the checked JSON value v compacted, every string in
 * it written again by pi_buf_json_strn (so an escape means what Go reads
 * it as, and nothing in v can end the string or object it is put in). */
static void pi_buf_json(pi_buf *b, pi_json v) {
	pi_json k, e;
	size_t i = 0, len;
	int first = 1;
	switch (pi_json_kind(v)) {
	case PI_ABSENT: pi_buf_cstr(b, "null"); return;
	case PI_STRING: {
		char *s = pi_json_str_len(v, &len);
		if (!s) { b->oom = 1; return; }
		pi_buf_json_strn(b, s, len);
		free(s);
		return;
	}
	case PI_ARRAY: case PI_OBJECT: {
		int obj = pi_json_kind(v) == PI_OBJECT;
		pi_buf_raw(b, obj ? "{" : "[", 1);
		while (pi_json_next(v, &i, &k, &e)) {
			if (!first) pi_buf_raw(b, ",", 1);
			first = 0;
			if (obj) {
				pi_buf_json(b, k);
				pi_buf_raw(b, ":", 1);
			}
			pi_buf_json(b, e);
		}
		pi_buf_raw(b, obj ? "}" : "]", 1);
		return;
	}
	default: pi_buf_raw(b, v.p, v.n); /* null, true, false, a number */
	}
}

/* pi_buf_base64 appends s[0..n) in standard base64 with padding. */
static void pi_buf_base64(pi_buf *b, const char *s, size_t n) {
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
		char q[4] = {al[v >> 18], al[(v >> 12) & 63], i + 1 < n ? al[(v >> 6) & 63] : '=', i + 2 < n ? al[v & 63] : '='};
		pi_buf_raw(b, q, 4);
	}
}

/* pi_base64_decode appends the bytes of standard base64 text (padded, as
 * pi writes it) to out; it returns 0, or 1 when the text is not base64. */
static int pi_base64_decode(const char *s, size_t n, pi_buf *out) {
	if (n % 4) return 1;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = s[i + j];
			int d = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
			if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '=')) { pad++; d = 0; }
			else if (d < 0 || pad) return 1;
			v = v << 6 | (uint32_t)d;
		}
		char q[3] = {(char)(v >> 16), (char)(v >> 8), (char)v};
		pi_buf_raw(out, q, (size_t)(3 - pad));
	}
	return 0;
}

/* ---- host calls ------------------------------------------------------------ */

/*
 * The host methods of docs/abi.md ("Host methods" and "ABI 1.1"), one
 * function each: kv, http, tool.call, ui, session and exec. Each returns 0
 * on success, or 1 when the host refused or failed (or the arguments could
 * not be sent), with the reason in pi_host_error(), worded as the Go SDK
 * words it: "host call kv.set: kv quota exceeded (5 of 4 bytes)". Results
 * go to buffers you pass (emptied first; free them with pi_buf_free).
 * JSON you pass in (kv values, tool input, session data) must be one
 * valid JSON value, else the call fails without reaching the host; it is
 * sent compacted, its strings escaped again.
 *
 * The 1.1 methods need a 1.1 host (pi_abi_minor() >= 1); a 1.0 host
 * answers them with an error. They work from any call pi makes into the
 * extension (a tool, a hook, a command); never from _initialize.
 */

PI_IMPORT("host_call") int64_t pi__host_call(const char *req, int32_t req_len, char *out, int32_t out_cap);
PI_IMPORT("host_take") int64_t pi__host_take(char *out, int32_t out_cap);

static pi_buf pi__host_err;

/* pi_host_error is the reason the last failed host call failed ("" before
 * any has); it stays until the next failure. */
static const char *pi_host_error(void) { return pi__host_err.p && !pi__host_err.oom ? pi__host_err.p : ""; }

static int pi__host_fail(const char *method, const char *msg, size_t n) {
	pi__buf_reset(&pi__host_err);
	pi_buf_cstr(&pi__host_err, "host call ");
	pi_buf_cstr(&pi__host_err, method);
	pi_buf_cstr(&pi__host_err, ": ");
	pi_buf_raw(&pi__host_err, msg, n);
	return 1;
}

/* pi__key starts the member key of an object being written ({ already
 * written; *first says whether it is the first member). */
static void pi__key(pi_buf *b, int *first, const char *key) {
	if (!*first) pi_buf_raw(b, ",", 1);
	*first = 0;
	pi_buf_json_str(b, key);
	pi_buf_raw(b, ":", 1);
}

static void pi__member_str(pi_buf *b, int *first, const char *key, const char *s) {
	pi__key(b, first, key);
	pi_buf_json_str(b, s ? s : "");
}

/* pi__member_json writes key and the JSON text j (checked: returns 1 when
 * j is not one JSON value). */
static int pi__member_json(pi_buf *b, int *first, const char *key, const char *j) {
	pi_json v = pi_json_parse(j, strlen(j));
	if (!v.p) return 1;
	pi__key(b, first, key);
	pi_buf_json(b, v);
	return 0;
}

static void pi__member_ms(pi_buf *b, int *first, const char *key, int64_t ms) {
	if (ms <= 0) return;
	pi__key(b, first, key);
	pi_buf_printf(b, "%lld", (long long)ms);
}

/* pi__request_begin writes {"method":METHOD,"params":{ */
static void pi__request_begin(pi_buf *b, const char *method) {
	pi_buf_cstr(b, "{\"method\":");
	pi_buf_json_str(b, method);
	pi_buf_cstr(b, ",\"params\":{");
}

/* pi__host_send sends the request in req (and frees it), and on an ok
 * answer writes its result as JSON to result (may be NULL). */
static int pi__host_send(const char *method, pi_buf *req, pi_buf *result) {
	enum { CAP = 4096 };
	if (result) pi__buf_reset(result);
	if (req->oom) {
		pi_buf_free(req);
		return pi__host_fail(method, "out of memory", 13);
	}
	char *out = malloc(CAP);
	if (!out) {
		pi_buf_free(req);
		return pi__host_fail(method, "out of memory", 13);
	}
	int64_t n = pi__host_call(req->p, (int32_t)req->n, out, CAP);
	pi_buf_free(req);
	char msg[128];
	if (n < 0) {
		free(out);
		snprintf(msg, sizeof msg, "host_call returned %lld (%s)", (long long)n,
		         n == -2 ? "called outside a call from pi" : "a buffer lies outside memory");
		return pi__host_fail(method, msg, strlen(msg));
	}
	if (n > CAP) {
		char *big = realloc(out, (size_t)n);
		if (!big) {
			free(out);
			return pi__host_fail(method, "out of memory", 13);
		}
		out = big;
		int64_t got = pi__host_take(out, (int32_t)n);
		if (got != n) {
			free(out);
			snprintf(msg, sizeof msg, "host_take returned %lld, want %lld", (long long)got, (long long)n);
			return pi__host_fail(method, msg, strlen(msg));
		}
	}
	pi_json resp = pi_json_parse(out, (size_t)n);
	int rc = 0;
	if (pi_json_kind(resp) != PI_OBJECT) {
		rc = pi__host_fail(method, "malformed answer from the host", 30);
	} else if (pi_json_true(pi_json_get(resp, "ok"))) {
		pi_json r = pi_json_get(resp, "result");
		if (result) {
			if (r.p) pi_buf_raw(result, r.p, r.n);
			else pi_buf_cstr(result, "{}");
			if (result->oom) rc = pi__host_fail(method, "out of memory", 13);
		}
	} else {
		size_t mn;
		char *m = pi_json_str_len(pi_json_get(pi_json_get(resp, "error"), "message"), &mn);
		rc = m ? pi__host_fail(method, m, mn) : pi__host_fail(method, "failed", 6);
		free(m);
	}
	free(out);
	return rc;
}

/* pi__send_built ends the params object and sends it; bad is what was
 * wrong with the arguments (NULL: nothing). */
static int pi__send_built(const char *method, pi_buf *req, const char *bad, pi_buf *result) {
	if (bad) {
		pi_buf_free(req);
		if (result) pi__buf_reset(result);
		return pi__host_fail(method, bad, strlen(bad));
	}
	pi_buf_cstr(req, "}}");
	return pi__host_send(method, req, result);
}

/* pi_host_call sends the host method `method` with params, the text of one
 * JSON object (NULL: {}), and writes the result, as JSON, to result (may be
 * NULL). The functions below are built on it; use it for a method a newer
 * host adds. */
static int pi_host_call(const char *method, const char *params, pi_buf *result) {
	pi_buf req = {0};
	pi_buf_cstr(&req, "{\"method\":");
	pi_buf_json_str(&req, method);
	pi_buf_cstr(&req, ",\"params\":");
	pi_json v = pi_json_parse(params ? params : "{}", params ? strlen(params) : 2);
	if (pi_json_kind(v) != PI_OBJECT) return pi__send_built(method, &req, "params must be one JSON object", result);
	pi_buf_json(&req, v);
	pi_buf_cstr(&req, "}");
	return pi__host_send(method, &req, result);
}

/* The kv scopes: pass one, or NULL for the default (this project). */
#define PI_SCOPE_PROJECT "project"
#define PI_SCOPE_GLOBAL "global"

/* The requests, built apart from sending so tests can compare them with
 * the Go SDK's; each returns what is wrong with its arguments, or NULL. */
static const char *pi__req_kv_get(pi_buf *b, const char *key, const char *scope) {
	int f = 1;
	pi__request_begin(b, "kv.get");
	pi__member_str(b, &f, "key", key);
	if (scope && *scope) pi__member_str(b, &f, "scope", scope);
	return NULL;
}

static const char *pi__req_kv_set(pi_buf *b, const char *key, const char *value, const char *scope) {
	int f = 1;
	pi__request_begin(b, "kv.set");
	pi__member_str(b, &f, "key", key);
	if (pi__member_json(b, &f, "value", value ? value : "null")) return "the value is not one JSON value";
	if (scope && *scope) pi__member_str(b, &f, "scope", scope);
	return NULL;
}

static const char *pi__req_kv_delete(pi_buf *b, const char *key, const char *scope) {
	int f = 1;
	pi__request_begin(b, "kv.delete");
	pi__member_str(b, &f, "key", key);
	if (scope && *scope) pi__member_str(b, &f, "scope", scope);
	return NULL;
}

static const char *pi__req_kv_list(pi_buf *b, const char *prefix, const char *scope) {
	int f = 1;
	pi__request_begin(b, "kv.list");
	if (prefix && *prefix) pi__member_str(b, &f, "prefix", prefix);
	if (scope && *scope) pi__member_str(b, &f, "scope", scope);
	return NULL;
}

/* pi_kv_get writes key's value, as JSON, to value; nothing (value->n ==
 * 0) when the key is not set. Read it with pi_json_parse(value->p,
 * value->n). */
static int pi_kv_get(const char *key, const char *scope, pi_buf *value) {
	pi_buf req = {0}, res = {0};
	if (pi__send_built("kv.get", &req, pi__req_kv_get(&req, key, scope), &res)) {
		pi_buf_free(&res);
		pi__buf_reset(value);
		return 1;
	}
	pi__buf_reset(value);
	pi_json v = pi_json_get(pi_json_parse(res.p, res.n), "value");
	if (v.p && pi_json_kind(v) != PI_NULL) pi_buf_raw(value, v.p, v.n);
	pi_buf_free(&res);
	return 0;
}

/* pi_kv_set stores value (the text of one JSON value; NULL deletes the
 * key), durably before it returns. The host refuses a set past the
 * extension's kv_mb quota. */
static int pi_kv_set(const char *key, const char *value, const char *scope) {
	pi_buf req = {0};
	return pi__send_built("kv.set", &req, pi__req_kv_set(&req, key, value, scope), NULL);
}

/* pi_kv_delete removes key (nothing happens when it is not set). */
static int pi_kv_delete(const char *key, const char *scope) {
	pi_buf req = {0};
	return pi__send_built("kv.delete", &req, pi__req_kv_delete(&req, key, scope), NULL);
}

/* pi_kv_list writes the keys that start with prefix (NULL: all), sorted,
 * as a JSON array of strings to keys. */
static int pi_kv_list(const char *prefix, const char *scope, pi_buf *keys) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("kv.list", &req, pi__req_kv_list(&req, prefix, scope), &res);
	pi__buf_reset(keys);
	if (!rc) {
		pi_json k = pi_json_get(pi_json_parse(res.p, res.n), "keys");
		if (k.p && pi_json_kind(k) == PI_ARRAY) pi_buf_raw(keys, k.p, k.n);
		else pi_buf_cstr(keys, "[]");
	}
	pi_buf_free(&res);
	return rc;
}

/* An HTTP request pi makes for the extension (the guest has no sockets). */
typedef struct {
	const char *method;         /* NULL: GET */
	const char *url;            /* must match one of the extension's http grants */
	const char *const *headers; /* NULL, or name, value, name, value, ..., NULL */
	const char *body;           /* NULL: none; sent as text when UTF-8, else base64 */
	size_t body_len;
	int64_t timeout_ms;         /* 0: the current call's deadline */
} pi_http_request;

/* The host's answer. Free it with pi_http_response_free. */
typedef struct {
	int status;
	pi_buf headers; /* one JSON object; repeated headers are joined with ", " */
	pi_buf body;    /* the body's bytes (NUL-terminated too) */
} pi_http_response;

static const char *pi__req_http(pi_buf *b, const pi_http_request *r) {
	int f = 1;
	pi__request_begin(b, "http.request");
	if (r->method && *r->method) pi__member_str(b, &f, "method", r->method);
	pi__member_str(b, &f, "url", r->url);
	if (r->headers && r->headers[0]) {
		int hf = 1;
		pi__key(b, &f, "headers");
		pi_buf_raw(b, "{", 1);
		for (const char *const *h = r->headers; h[0]; h += 2) {
			if (!h[1]) return "headers must come in name, value pairs";
			pi__member_str(b, &hf, h[0], h[1]);
		}
		pi_buf_raw(b, "}", 1);
	}
	if (r->body) {
		if (pi_utf8_valid(r->body, r->body_len)) {
			pi__key(b, &f, "body");
			pi_buf_json_strn(b, r->body, r->body_len);
		} else {
			pi__key(b, &f, "bodyBase64");
			pi_buf_raw(b, "\"", 1);
			pi_buf_base64(b, r->body, r->body_len);
			pi_buf_raw(b, "\"", 1);
		}
	}
	pi__member_ms(b, &f, "timeoutMs", r->timeout_ms);
	return NULL;
}

static void pi_http_response_free(pi_http_response *r) {
	pi_buf_free(&r->headers);
	pi_buf_free(&r->body);
	r->status = 0;
}

/* pi_http makes an HTTP request through the host. The URL and every
 * redirect must match the extension's http grants; bodies over 4 MiB are
 * refused. A response with any status is a success: see resp->status. */
static int pi_http(const pi_http_request *req, pi_http_response *resp) {
	pi_buf rq = {0}, res = {0};
	int rc = pi__send_built("http.request", &rq, pi__req_http(&rq, req), &res);
	pi__buf_reset(&resp->headers);
	pi__buf_reset(&resp->body);
	resp->status = 0;
	if (!rc) {
		pi_json r = pi_json_parse(res.p, res.n);
		double st = 0;
		pi_json_num(pi_json_get(r, "status"), &st);
		resp->status = (int)st;
		pi_json h = pi_json_get(r, "headers");
		if (pi_json_kind(h) == PI_OBJECT) pi_buf_raw(&resp->headers, h.p, h.n);
		else pi_buf_cstr(&resp->headers, "{}");
		size_t tn = 0, bn = 0;
		char *text = pi_json_str_len(pi_json_get(r, "body"), &tn);
		char *b64 = text ? NULL : pi_json_str_len(pi_json_get(r, "bodyBase64"), &bn);
		pi_buf_raw(&resp->body, "", 0); /* never NULL */
		if (text) pi_buf_raw(&resp->body, text, tn);
		else if (b64 && pi_base64_decode(b64, bn, &resp->body)) rc = pi__host_fail("http.request", "bodyBase64 is not base64", 24);
		free(text);
		free(b64);
		if (!rc && (resp->body.oom || resp->headers.oom)) rc = pi__host_fail("http.request", "out of memory", 13);
	}
	pi_buf_free(&res);
	return rc;
}

/* pi_http_header returns the value of the response header name (as Go
 * spells it: "Content-Type"), in memory from malloc, or NULL. */
static char *pi_http_header(const pi_http_response *r, const char *name) {
	return pi_json_str(pi_json_get(pi_json_parse(r->headers.p, r->headers.n), name));
}

/* A tool's result as tool.call returns it. Free it with
 * pi_tool_result_free. */
typedef struct {
	int is_error;
	pi_buf text;   /* its text blocks, joined by newlines */
	pi_buf result; /* the whole result as JSON: {"content", "details"?, "isError"} */
} pi_tool_result;

static const char *pi__req_tool_call(pi_buf *b, const char *name, const char *input) {
	int f = 1;
	pi__request_begin(b, "tool.call");
	pi__member_str(b, &f, "name", name);
	if (input && pi__member_json(b, &f, "input", input)) return "the input is not one JSON value";
	return NULL;
}

static void pi_tool_result_free(pi_tool_result *r) {
	pi_buf_free(&r->text);
	pi_buf_free(&r->result);
	r->is_error = 0;
}

/* pi_tool_call runs a tool (built in or another extension's) through the
 * whole pipeline the model's calls take; input is the text of a JSON
 * object (NULL: {}). The tool must be in the extension's tools grant. A
 * call that a hook or a rule blocked is a success with is_error set and
 * the reason as its text. */
static int pi_tool_call(const char *name, const char *input, pi_tool_result *out) {
	pi_buf req = {0};
	pi__buf_reset(&out->text);
	out->is_error = 0;
	int rc = pi__send_built("tool.call", &req, pi__req_tool_call(&req, name, input), &out->result);
	if (rc) return rc;
	pi_json r = pi_json_parse(out->result.p, out->result.n), blk;
	out->is_error = pi_json_true(pi_json_get(r, "isError"));
	size_t i = 0, n;
	int first = 1;
	pi_json content = pi_json_get(r, "content");
	pi_buf_raw(&out->text, "", 0);
	while (pi_json_next(content, &i, NULL, &blk)) {
		if (!pi_json_eq(pi_json_get(blk, "type"), "text")) continue;
		char *t = pi_json_str_len(pi_json_get(blk, "text"), &n);
		if (!first) pi_buf_raw(&out->text, "\n", 1);
		first = 0;
		if (t) pi_buf_raw(&out->text, t, n);
		free(t);
	}
	return out->text.oom ? pi__host_fail("tool.call", "out of memory", 13) : 0;
}

/* Notification levels of pi_notify (NULL is info). */
#define PI_NOTIFY_INFO "info"
#define PI_NOTIFY_WARNING "warning"
#define PI_NOTIFY_ERROR "error"

static const char *pi__req_notify(pi_buf *b, const char *message, const char *level) {
	int f = 1;
	pi__request_begin(b, "ui.notify");
	pi__member_str(b, &f, "message", message);
	if (level && *level) pi__member_str(b, &f, "level", level);
	return NULL;
}

/* pi_notify shows the person a message; without a person it is logged. */
static int pi_notify(const char *message, const char *level) {
	pi_buf req = {0};
	return pi__send_built("ui.notify", &req, pi__req_notify(&req, message, level), NULL);
}

/* The answer to pi_confirm: reason is "no-ui" (nobody can answer) or
 * "timeout" when confirmed is 0 without a person's no, else "". */
typedef struct {
	int confirmed;
	char reason[16];
} pi_confirm_result;

static const char *pi__req_confirm(pi_buf *b, const char *title, const char *message, int64_t timeout_ms) {
	int f = 1;
	pi__request_begin(b, "ui.confirm");
	pi__member_str(b, &f, "title", title);
	pi__member_str(b, &f, "message", message);
	pi__member_ms(b, &f, "timeoutMs", timeout_ms);
	return NULL;
}

/* pi_confirm asks the person a yes/no question (default no). Without a
 * person it answers at once {0, "no-ui"}; after timeout_ms (0: the current
 * call's deadline) {0, "timeout"}. */
static int pi_confirm(const char *title, const char *message, int64_t timeout_ms, pi_confirm_result *out) {
	pi_buf req = {0}, res = {0};
	memset(out, 0, sizeof *out);
	int rc = pi__send_built("ui.confirm", &req, pi__req_confirm(&req, title, message, timeout_ms), &res);
	if (!rc) {
		pi_json r = pi_json_parse(res.p, res.n);
		out->confirmed = pi_json_true(pi_json_get(r, "confirmed"));
		char *why = pi_json_str(pi_json_get(r, "reason"));
		if (why) snprintf(out->reason, sizeof out->reason, "%s", why);
		free(why);
	}
	pi_buf_free(&res);
	return rc;
}

static const char *pi__req_session_append(pi_buf *b, const char *custom_type, const char *data) {
	int f = 1;
	pi__request_begin(b, "session.append");
	pi__member_str(b, &f, "customType", custom_type);
	if (pi__member_json(b, &f, "data", data ? data : "null")) return "the data is not one JSON value";
	return NULL;
}

static const char *pi__req_session_entries(pi_buf *b, const char *custom_type) {
	int f = 1;
	pi__request_begin(b, "session.entries");
	if (custom_type && *custom_type) pi__member_str(b, &f, "customType", custom_type);
	return NULL;
}

/* pi_session_append adds a custom entry (data: the text of one JSON value)
 * to the session, on the current branch, never sent to the model, and
 * writes its id to id (may be NULL). customType is 1 to 128 printable
 * ASCII characters without spaces: use the extension's name. */
static int pi_session_append(const char *custom_type, const char *data, pi_buf *id) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("session.append", &req, pi__req_session_append(&req, custom_type, data), &res);
	if (id) {
		pi__buf_reset(id);
		size_t n;
		char *s = rc ? NULL : pi_json_str_len(pi_json_get(pi_json_parse(res.p, res.n), "id"), &n);
		if (s) pi_buf_raw(id, s, n);
		free(s);
	}
	pi_buf_free(&res);
	return rc;
}

/* pi_session_entries writes the custom entries on the current branch, root
 * first (only those of custom_type unless it is NULL), as a JSON array of
 * {"id", "customType", "data", ...} to entries. */
static int pi_session_entries(const char *custom_type, pi_buf *entries) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("session.entries", &req, pi__req_session_entries(&req, custom_type), &res);
	pi__buf_reset(entries);
	if (!rc) {
		pi_json e = pi_json_get(pi_json_parse(res.p, res.n), "entries");
		if (pi_json_kind(e) == PI_ARRAY) pi_buf_raw(entries, e.p, e.n);
		else pi_buf_cstr(entries, "[]");
	}
	pi_buf_free(&res);
	return rc;
}

/* The optional parts of pi_exec (NULL: none). */
typedef struct {
	const char *cwd;   /* absolute, or relative to the project root; NULL: the project root */
	int64_t timeout_ms; /* 0: the host's default */
	const char *stdin_text;
} pi_exec_options;

/* What a command run by pi_exec produced. Free it with
 * pi_exec_result_free. */
typedef struct {
	pi_buf out, err; /* its stdout and stderr */
	int exit_code;
} pi_exec_result;

static const char *pi__req_exec(pi_buf *b, const char *const *argv, const pi_exec_options *o) {
	int f = 1, af = 1;
	pi__request_begin(b, "exec");
	pi__key(b, &f, "argv");
	pi_buf_raw(b, "[", 1);
	for (const char *const *a = argv; a && *a; a++) {
		if (!af) pi_buf_raw(b, ",", 1);
		af = 0;
		pi_buf_json_str(b, *a);
	}
	pi_buf_raw(b, "]", 1);
	if (o && o->cwd && *o->cwd) pi__member_str(b, &f, "cwd", o->cwd);
	if (o) pi__member_ms(b, &f, "timeoutMs", o->timeout_ms);
	if (o && o->stdin_text && *o->stdin_text) pi__member_str(b, &f, "stdin", o->stdin_text);
	return argv && *argv ? NULL : "argv is empty";
}

static void pi_exec_result_free(pi_exec_result *r) {
	pi_buf_free(&r->out);
	pi_buf_free(&r->err);
	r->exit_code = 0;
}

/* pi_exec runs argv (ended by NULL) on the host, outside the sandbox, when
 * it matches one of the extension's exec grants and its directory lies in
 * its fs grants. A command that exits non-zero is a success: see
 * exit_code. */
static int pi_exec(const char *const *argv, const pi_exec_options *opts, pi_exec_result *res) {
	pi_buf req = {0}, ans = {0};
	int rc = pi__send_built("exec", &req, pi__req_exec(&req, argv, opts), &ans);
	pi__buf_reset(&res->out);
	pi__buf_reset(&res->err);
	res->exit_code = 0;
	if (!rc) {
		pi_json r = pi_json_parse(ans.p, ans.n);
		size_t n;
		char *s = pi_json_str_len(pi_json_get(r, "stdout"), &n);
		pi_buf_raw(&res->out, s ? s : "", s ? n : 0);
		free(s);
		s = pi_json_str_len(pi_json_get(r, "stderr"), &n);
		pi_buf_raw(&res->err, s ? s : "", s ? n : 0);
		free(s);
		double code = 0;
		pi_json_num(pi_json_get(r, "exitCode"), &code);
		res->exit_code = (int)code;
	}
	pi_buf_free(&ans);
	return rc;
}

/* ---- what init said (ABI 1.1) ------------------------------------------------ */

static struct {
	int abi_minor, trusted, has_ui;
	char *mode, *project_root;
} pi__facts;

/* pi_abi_minor is the host's ABI minor version: 1 for a 1.1 host, 0 for a
 * 1.0 host (or before init). */
static int pi_abi_minor(void) { return pi__facts.abi_minor; }
/* pi_trusted reports whether the project's pi.toml is trusted. */
static int pi_trusted(void) { return pi__facts.trusted; }
/* pi_has_ui reports whether a person can answer pi_confirm. */
static int pi_has_ui(void) { return pi__facts.has_ui; }
/* pi_mode is how pi runs: "interactive", "print", "json", "rpc", "tool" or
 * "inspect" ("" for a 1.0 host). */
static const char *pi_mode(void) { return pi__facts.mode ? pi__facts.mode : ""; }
/* pi_project_root is the folder whose pi.toml applies ("" for a 1.0 host). */
static const char *pi_project_root(void) { return pi__facts.project_root ? pi__facts.project_root : ""; }

static void pi__read_facts(pi_json params) {
	double minor = 0;
	pi_json_num(pi_json_get(params, "abiMinor"), &minor);
	pi__facts.abi_minor = (int)minor;
	pi__facts.trusted = pi_json_true(pi_json_get(params, "trusted"));
	pi__facts.has_ui = pi_json_true(pi_json_get(params, "hasUI"));
	free(pi__facts.mode);
	free(pi__facts.project_root);
	pi__facts.mode = pi_json_str(pi_json_get(params, "mode"));
	pi__facts.project_root = pi_json_str(pi_json_get(params, "projectRoot"));
}

/* ---- the extension ------------------------------------------------------ */

/* A slash command (ABI 1.1): a line /NAME ARGS typed by the user runs it
 * with ARGS (the rest of the line, trimmed) instead of going to the model. */
typedef struct {
	const char *name;          /* without the slash: [a-z][a-z0-9-]* */
	const char *description;   /* one line for /help */
	const char *argument_hint; /* what it takes, such as "[item]"; NULL: none */
	/* Write what to show the user to text and, to send the model a prompt
	 * as the user's message, that prompt to prompt; return 0. Or return 1
	 * with an error message (shown to the user) in text. */
	int (*run)(const char *args, pi_buf *text, pi_buf *prompt);
} pi_command;

/* Answers of the tool_call hook. */
enum { PI_ALLOW = 0, PI_BLOCK = 1, PI_ASK = 2 };
/* Answers of the input hook. */
enum { PI_INPUT_PASS = 0, PI_INPUT_REPLACE = 1, PI_INPUT_HANDLED = 2 };

/* What a before_agent_start hook changes; what it leaves empty stays. */
typedef struct {
	pi_buf system_prompt;        /* replaces the system prompt for this prompt's run */
	pi_buf append_system_prompt; /* is added after it, after a blank line */
	pi_buf context;              /* a user-role message added before the prompt */
} pi_agent_start;

/* What an extension defines, as the constant pi_ext. Only declaration is
 * required; a NULL function means "not handled". */
typedef struct {
	/* init's result as JSON: {"name", "version", "description"?, "tools":
	 * [ToolSpec], "hooks": ["tool_call", ...], "wants"?}. ABI 1.1 adds
	 * "configSchema" (a JSON Schema of [extensions.config]), "events", the
	 * hooks "input", "before_agent_start", "stop" and "wants" http and
	 * tools: write them here too; pi.h leaves them out for a 1.0 host
	 * (which would refuse them) and logs a warning. Commands are declared
	 * in commands below, never here. */
	const char *declaration;
	/* Called by init with [extensions.config] ({} when none). Return NULL,
	 * or an error message: the load fails with it. pi_abi_minor(),
	 * pi_mode() and the other facts are set before it runs. */
	const char *(*init)(pi_json config);
	/* One tool call: write the result's text to out and return 0, or
	 * return 1 to answer it as an error (isError, out the message). */
	int (*tool)(const char *name, pi_json input, pi_buf *out);
	/* The tool_call hook (declare "tool_call" in hooks): return PI_ALLOW
	 * to let the call through, PI_BLOCK to block it with the reason written
	 * to reason, or PI_ASK to have the person asked the question written
	 * to reason (ABI 1.1; a 1.0 host gets a block saying so). */
	int (*tool_call)(const char *tool, pi_json input, pi_buf *reason);
	/* Any other method (hook.tool_result, hook.bash_spawn, event): write
	 * the result as JSON to result and return 0 (nothing written means
	 * {}), or write an error message and return 1. */
	int (*other)(const char *method, pi_json params, pi_buf *result);

	/* ---- ABI 1.1: used only with a 1.1 host (pi_abi_minor() >= 1) ---- */

	/* Slash commands, ended by an entry whose name is NULL. */
	const pi_command *commands;
	/* The input hook (declare "input" in hooks): sees what a person sent.
	 * Return PI_INPUT_PASS, PI_INPUT_REPLACE with the new text written to
	 * out, or PI_INPUT_HANDLED with a message for the user in out (the
	 * prompt does not reach the model). */
	int (*input)(const char *text, pi_json images, const char *mode, pi_buf *out);
	/* The before_agent_start hook (declare it in hooks): once per prompt. */
	void (*before_agent_start)(const char *prompt, const char *system_prompt, pi_agent_start *change);
	/* The stop hook (declare "stop" in hooks): the model ended a turn with
	 * no tool calls. Return 1 with a message to send it as a user message
	 * and go on, or 0 to let the run end. */
	int (*stop)(const char *last_text, int turns, pi_buf *message);
} pi_extension;

extern const pi_extension pi_ext;

/* ---- the exports ---------------------------------------------------------- */

static const char pi__oom[] = "{\"ok\":false,\"error\":{\"message\":\"out of memory\"}}";

PI_EXPORT("pi_abi_v1") void pi_abi_v1(void) {}

PI_EXPORT("pi_alloc") void *pi_alloc(int32_t size) { return malloc(size > 0 ? (size_t)size : 1); }

PI_EXPORT("pi_free") void pi_free(void *ptr, int32_t size) {
	(void)size;
	if (ptr != (void *)pi__oom) free(ptr);
}

static int64_t pi__pack(const char *p, size_t n) { return (int64_t)(((uint64_t)(uintptr_t)p << 32) | (uint32_t)n); }

/* pi__answer packs an ok:true answer with result (NULL or empty: {}), or
 * an ok:false one with the message in result. */
static int64_t pi__answer(int ok, pi_buf *result) {
	pi_buf out = {0};
	if (result && result->oom) {
		pi_buf_free(result);
		return pi__pack(pi__oom, sizeof pi__oom - 1);
	}
	if (ok) {
		pi_buf_cstr(&out, "{\"ok\":true,\"result\":");
		if (result && result->n) pi_buf_raw(&out, result->p, result->n);
		else pi_buf_cstr(&out, "{}");
		pi_buf_cstr(&out, "}");
	} else {
		pi_buf_cstr(&out, "{\"ok\":false,\"error\":{\"message\":");
		pi_buf_json_strn(&out, result && result->n ? result->p : "failed", result && result->n ? result->n : 6);
		pi_buf_cstr(&out, "}}");
	}
	if (result) pi_buf_free(result);
	if (out.oom) { pi_buf_free(&out); return pi__pack(pi__oom, sizeof pi__oom - 1); }
	return pi__pack(out.p, out.n);
}

static int64_t pi__error(const char *msg) {
	pi_buf b = {0};
	pi_buf_cstr(&b, msg);
	return pi__answer(0, &b);
}

/* pi__hook11 reports whether a hook name is one ABI 1.1 added, and
 * whether pi_ext handles it. */
static int pi__hook11(pi_json name, int *handled) {
	if (pi_json_eq(name, "input")) *handled = pi_ext.input != NULL;
	else if (pi_json_eq(name, "before_agent_start")) *handled = pi_ext.before_agent_start != NULL;
	else if (pi_json_eq(name, "stop")) *handled = pi_ext.stop != NULL;
	else return 0;
	*handled = *handled || pi_ext.other != NULL;
	return 1;
}

/* pi__declare writes init's result: pi_ext.declaration without what a 1.0
 * host refuses, plus the commands for a 1.1 host. It returns why the
 * declaration is wrong, or NULL. */
static const char *pi__declare(pi_buf *out) {
	const char *d = pi_ext.declaration ? pi_ext.declaration : "";
	pi_json decl = pi_json_parse(d, strlen(d)), k, v, e;
	if (pi_json_kind(decl) != PI_OBJECT) return "pi_ext.declaration is not a JSON object";
	int v11 = pi_abi_minor() >= 1, dropped = 0, first = 1, handled;
	size_t i = 0, j;
	pi_buf_raw(out, "{", 1);
	while (pi_json_next(decl, &i, &k, &v)) {
		if (pi_json_eq(k, "commands")) return "pi_ext.declaration has \"commands\": declare commands in pi_ext.commands";
		if (!v11 && (pi_json_eq(k, "configSchema") || pi_json_eq(k, "events"))) {
			dropped = 1;
			continue;
		}
		if (!first) pi_buf_raw(out, ",", 1);
		first = 0;
		pi_buf_json(out, k);
		pi_buf_raw(out, ":", 1);
		int hooks = pi_json_eq(k, "hooks"), wants = !v11 && pi_json_eq(k, "wants");
		if ((hooks && pi_json_kind(v) == PI_ARRAY) || (wants && pi_json_kind(v) == PI_OBJECT)) {
			int ef = 1;
			pi_json wk;
			pi_buf_raw(out, hooks ? "[" : "{", 1);
			for (j = 0; pi_json_next(v, &j, &wk, &e);) {
				if (hooks && pi__hook11(e, &handled)) {
					if (!v11) { dropped = 1; continue; }
					if (!handled) return "pi_ext.declaration lists a hook (input, before_agent_start or stop) whose function in pi_ext is NULL";
				}
				if (wants && (pi_json_eq(wk, "http") || pi_json_eq(wk, "tools"))) { dropped = 1; continue; }
				if (!ef) pi_buf_raw(out, ",", 1);
				ef = 0;
				if (wants) {
					pi_buf_json(out, wk);
					pi_buf_raw(out, ":", 1);
				}
				pi_buf_json(out, e);
			}
			pi_buf_raw(out, hooks ? "]" : "}", 1);
		} else {
			pi_buf_json(out, v);
		}
	}
	if (pi_ext.commands && pi_ext.commands[0].name) {
		if (!v11) {
			dropped = 1;
		} else {
			if (!first) pi_buf_raw(out, ",", 1);
			pi_buf_cstr(out, "\"commands\":[");
			for (const pi_command *c = pi_ext.commands; c->name; c++) {
				int cf = 1;
				if (!c->run) return "a command in pi_ext.commands has no run function";
				pi_buf_cstr(out, c == pi_ext.commands ? "{" : ",{");
				pi__member_str(out, &cf, "name", c->name);
				pi__member_str(out, &cf, "description", c->description);
				if (c->argument_hint && *c->argument_hint) pi__member_str(out, &cf, "argumentHint", c->argument_hint);
				pi_buf_raw(out, "}", 1);
			}
			pi_buf_raw(out, "]", 1);
		}
	}
	pi_buf_raw(out, "}", 1);
	if (dropped)
		pi_log(PI_WARN, "this extension uses ABI 1.1 (commands, prompt hooks, config schema, events, http or tools wants), but the host speaks ABI 1.0: those parts stay unused");
	return NULL;
}

/* pi__text_member writes ,"key":TEXT (or the first member) when b holds
 * text. */
static void pi__text_member(pi_buf *out, int *first, const char *key, pi_buf *b) {
	if (!b->n) return;
	pi__key(out, first, key);
	pi_buf_json_strn(out, b->p, b->n);
}

PI_EXPORT("pi_call") int64_t pi_call(const char *ptr, int32_t len) {
	pi_json req = pi_json_parse(ptr, (size_t)len);
	if (pi_json_kind(req) != PI_OBJECT) return pi__error("malformed request: not a JSON object");
	pi_json params = pi_json_get(req, "params");
	char *method = pi_json_str(pi_json_get(req, "method"));
	if (!method) return pi__error("malformed request: no method");
	pi_buf res = {0};
	int64_t answer;
	if (strcmp(method, "init") == 0) {
		pi__read_facts(params);
		const char *err = pi_ext.init ? pi_ext.init(pi_json_get(params, "config")) : NULL;
		if (!err) err = pi__declare(&res);
		if (err) {
			pi_buf_free(&res);
			answer = pi__error(err);
		} else {
			answer = pi__answer(1, &res);
		}
	} else if (strcmp(method, "tool.execute") == 0 && pi_ext.tool) {
		char *name = pi_json_str(pi_json_get(params, "toolName"));
		pi_buf text = {0};
		int isErr = pi_ext.tool(name ? name : "", pi_json_get(params, "input"), &text);
		pi_buf_cstr(&res, "{\"content\":[{\"type\":\"text\",\"text\":");
		pi_buf_json_strn(&res, text.n ? text.p : "", text.n);
		pi_buf_cstr(&res, isErr ? "}],\"isError\":true}" : "}],\"isError\":false}");
		pi_buf_free(&text);
		free(name);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "hook.tool_call") == 0 && pi_ext.tool_call) {
		char *tool = pi_json_str(pi_json_get(params, "toolName"));
		pi_buf reason = {0};
		int d = pi_ext.tool_call(tool ? tool : "", pi_json_get(params, "input"), &reason);
		if (d == PI_ASK && pi_abi_minor() >= 1) {
			pi_buf_cstr(&res, "{\"ask\":");
			pi_buf_json_strn(&res, reason.n ? reason.p : "allow this call?", reason.n ? reason.n : 16);
			pi_buf_cstr(&res, "}");
		} else if (d == PI_ASK) {
			pi_buf_cstr(&res, "{\"block\":true,\"reason\":");
			pi_buf msg = {0};
			pi_buf_cstr(&msg, "needs approval: ");
			pi_buf_raw(&msg, reason.n ? reason.p : "allow this call?", reason.n ? reason.n : 16);
			pi_buf_cstr(&msg, " (this pi cannot ask: it speaks extension ABI 1.0)");
			pi_buf_json_strn(&res, msg.p, msg.n);
			pi_buf_free(&msg);
			pi_buf_cstr(&res, "}");
		} else if (d) {
			pi_buf_cstr(&res, "{\"block\":true,\"reason\":");
			pi_buf_json_strn(&res, reason.n ? reason.p : "blocked", reason.n ? reason.n : 7);
			pi_buf_cstr(&res, "}");
		}
		pi_buf_free(&reason);
		free(tool);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "command.execute") == 0 && pi_ext.commands) {
		char *name = pi_json_str(pi_json_get(params, "name"));
		char *args = pi_json_str(pi_json_get(params, "args"));
		const pi_command *c = pi_ext.commands;
		while (c->name && !(name && strcmp(c->name, name) == 0)) c++;
		if (!c->name || !c->run) {
			pi_buf_printf(&res, "no command /%s", name ? name : "");
			answer = pi__answer(0, &res);
		} else {
			pi_buf text = {0}, prompt = {0};
			int f = 1;
			if (c->run(args ? args : "", &text, &prompt)) {
				answer = pi__answer(0, &text);
			} else {
				pi_buf_raw(&res, "{", 1);
				pi__text_member(&res, &f, "text", &text);
				pi__text_member(&res, &f, "prompt", &prompt);
				pi_buf_raw(&res, "}", 1);
				answer = pi__answer(1, &res);
			}
			pi_buf_free(&text);
			pi_buf_free(&prompt);
		}
		free(name);
		free(args);
	} else if (strcmp(method, "hook.input") == 0 && pi_ext.input) {
		char *text = pi_json_str(pi_json_get(params, "text"));
		char *mode = pi_json_str(pi_json_get(params, "mode"));
		pi_buf out = {0};
		int d = pi_ext.input(text ? text : "", pi_json_get(params, "images"), mode ? mode : "", &out);
		if (d == PI_INPUT_HANDLED) {
			int f = 1;
			pi_buf_cstr(&res, "{\"handled\":true");
			f = 0;
			pi__text_member(&res, &f, "message", &out);
			pi_buf_raw(&res, "}", 1);
		} else if (d == PI_INPUT_REPLACE) {
			pi_buf_cstr(&res, "{\"text\":");
			pi_buf_json_strn(&res, out.n ? out.p : "", out.n);
			pi_buf_raw(&res, "}", 1);
		}
		pi_buf_free(&out);
		free(text);
		free(mode);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "hook.before_agent_start") == 0 && pi_ext.before_agent_start) {
		char *prompt = pi_json_str(pi_json_get(params, "prompt"));
		char *sys = pi_json_str(pi_json_get(params, "systemPrompt"));
		pi_agent_start ch = {{0}, {0}, {0}};
		int f = 1;
		pi_ext.before_agent_start(prompt ? prompt : "", sys ? sys : "", &ch);
		pi_buf_raw(&res, "{", 1);
		pi__text_member(&res, &f, "systemPrompt", &ch.system_prompt);
		pi__text_member(&res, &f, "appendSystemPrompt", &ch.append_system_prompt);
		if (ch.context.n) {
			pi__key(&res, &f, "messages");
			pi_buf_cstr(&res, "[{\"content\":[{\"type\":\"text\",\"text\":");
			pi_buf_json_strn(&res, ch.context.p, ch.context.n);
			pi_buf_cstr(&res, "}]}]");
		}
		pi_buf_raw(&res, "}", 1);
		res.oom |= ch.system_prompt.oom | ch.append_system_prompt.oom | ch.context.oom;
		pi_buf_free(&ch.system_prompt);
		pi_buf_free(&ch.append_system_prompt);
		pi_buf_free(&ch.context);
		free(prompt);
		free(sys);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "hook.stop") == 0 && pi_ext.stop) {
		char *last = pi_json_str(pi_json_get(params, "lastText"));
		double turns = 0;
		pi_json_num(pi_json_get(params, "turns"), &turns);
		pi_buf msg = {0};
		if (pi_ext.stop(last ? last : "", (int)turns, &msg)) {
			size_t k = 0;
			while (k < msg.n && (msg.p[k] == ' ' || msg.p[k] == '\t' || msg.p[k] == '\n' || msg.p[k] == '\r')) k++;
			if (k == msg.n) {
				pi_buf_cstr(&res, "a stop hook continued without a message");
				answer = pi__answer(0, &res);
			} else {
				pi_buf_cstr(&res, "{\"continue\":true,\"message\":");
				pi_buf_json_strn(&res, msg.p, msg.n);
				pi_buf_raw(&res, "}", 1);
				answer = pi__answer(1, &res);
			}
		} else {
			answer = pi__answer(1, &res);
		}
		pi_buf_free(&msg);
		free(last);
	} else if (pi_ext.other) {
		int failed = pi_ext.other(method, params, &res);
		answer = pi__answer(!failed, &res);
	} else {
		pi_buf_printf(&res, "unknown method %s", method);
		answer = pi__answer(0, &res);
	}
	free(method);
	return answer;
}

#endif /* PI_H */
