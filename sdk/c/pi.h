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
 *
 * Whole tool results (pi_ext.execute with a pi_result: text and image
 * blocks, details, terminate; pi_emit for progress) and typed
 * tool_result, bash_spawn and event hooks work with any host. ABI 1.2 is
 * here too: a typed helper for every 1.2 host method (pi_ui_select,
 * pi_ui_set_status_line, pi_ui_component, pi_session_branch,
 * pi_agent_send_message, pi_tools_register, pi_model_get,
 * pi_llm_complete, pi_flags_get, pi_timer_set, pi_watch_add, pi_bus_emit,
 * pi_shutdown, ...), pi_lines for styled lines, and a pi_ext function for
 * every 1.2 guest method and hook (component_render, tool_render,
 * shortcut, timer, watch, bus, context, user_bash, session_before, ...).
 * pi.h leaves the 1.2 parts out of init's answer for an older host.
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

/* ---- whole tool results ------------------------------------------------------ */

/*
 * A pi_result is a tool's whole result, as the Go SDK's sdk.Result: content
 * blocks (text and images), details (free JSON for the UI and the event
 * stream, never sent to the model), isError and terminate. Build it with
 * the functions below; pi.h writes it. The same type is a partial result
 * for pi_emit and a patch in a tool_result hook.
 */
typedef struct {
	pi_buf content; /* the blocks written so far, as JSON objects separated by commas */
	pi_buf details; /* one JSON value, or empty: none */
	int is_error;   /* in a tool_result patch: -1 keeps it (the start value) */
	int terminate;  /* ask the loop to end the run after this batch of calls */
	int blocks;     /* how many blocks content holds */
} pi_result;

static void pi__block_sep(pi_result *r) {
	if (r->blocks++) pi_buf_raw(&r->content, ",", 1);
}

/* pi_result_textn adds a text block of s[0..n). */
static void pi_result_textn(pi_result *r, const char *s, size_t n) {
	pi__block_sep(r);
	pi_buf_cstr(&r->content, "{\"type\":\"text\",\"text\":");
	pi_buf_json_strn(&r->content, s ? s : "", s ? n : 0);
	pi_buf_raw(&r->content, "}", 1);
}

/* pi_result_text adds a text block. */
static void pi_result_text(pi_result *r, const char *s) { pi_result_textn(r, s, s ? strlen(s) : 0); }

/* pi_result_textf adds a printf-formatted text block. */
static void pi_result_textf(pi_result *r, const char *fmt, ...) {
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) n = 0;
	if ((size_t)n < sizeof small) {
		pi_result_textn(r, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) { r->content.oom = 1; return; }
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	pi_result_textn(r, big, (size_t)n);
	free(big);
}

/* pi_result_image adds an image block of the bytes data[0..n) (encoded in
 * base64 here) with its MIME type ("image/png"). */
static void pi_result_image(pi_result *r, const void *data, size_t n, const char *mime_type) {
	pi__block_sep(r);
	pi_buf_cstr(&r->content, "{\"type\":\"image\",\"data\":\"");
	pi_buf_base64(&r->content, (const char *)data, n);
	pi_buf_cstr(&r->content, "\",\"mimeType\":");
	pi_buf_json_str(&r->content, mime_type ? mime_type : "");
	pi_buf_raw(&r->content, "}", 1);
}

/* pi_result_image_base64 adds an image block whose data is base64 already. */
static void pi_result_image_base64(pi_result *r, const char *b64, const char *mime_type) {
	pi__block_sep(r);
	pi_buf_cstr(&r->content, "{\"type\":\"image\",\"data\":");
	pi_buf_json_str(&r->content, b64 ? b64 : "");
	pi_buf_cstr(&r->content, ",\"mimeType\":");
	pi_buf_json_str(&r->content, mime_type ? mime_type : "");
	pi_buf_raw(&r->content, "}", 1);
}

/* pi_result_blocks adds the blocks of a JSON array of blocks (such as the
 * content of pi_tool_call's result); it returns 1 when json is not an
 * array. */
static int pi_result_blocks(pi_result *r, const char *json) {
	pi_json v = pi_json_parse(json ? json : "", json ? strlen(json) : 0), e;
	if (pi_json_kind(v) != PI_ARRAY) return 1;
	size_t i = 0;
	while (pi_json_next(v, &i, NULL, &e)) {
		pi__block_sep(r);
		pi_buf_json(&r->content, e);
	}
	return 0;
}

/* pi_result_details sets details to json (the text of one JSON value;
 * NULL removes them); it returns 1 when json is not one JSON value. */
static int pi_result_details(pi_result *r, const char *json) {
	pi__buf_reset(&r->details);
	if (!json) return 0;
	pi_json v = pi_json_parse(json, strlen(json));
	if (!v.p) return 1;
	pi_buf_json(&r->details, v);
	return 0;
}

static void pi_result_free(pi_result *r) {
	pi_buf_free(&r->content);
	pi_buf_free(&r->details);
	r->blocks = 0;
	r->is_error = r->terminate = 0;
}

/* pi__result_write writes r as tool.execute's result (whole: 1) or as
 * emit's partial result (0): the bytes Go's encoding of sdk.Result makes. */
static void pi__result_write(pi_buf *out, const pi_result *r, int whole) {
	pi_buf_cstr(out, "{\"content\":[");
	if (r->content.n) pi_buf_raw(out, r->content.p, r->content.n);
	pi_buf_raw(out, "]", 1);
	if (r->details.n) {
		pi_buf_cstr(out, ",\"details\":");
		pi_buf_raw(out, r->details.p, r->details.n);
	}
	if (whole && r->is_error > 0) pi_buf_cstr(out, ",\"isError\":true");
	if (whole && r->terminate) pi_buf_cstr(out, ",\"terminate\":true");
	pi_buf_raw(out, "}", 1);
	out->oom |= r->content.oom | r->details.oom;
}

/* What a tool's execute function gets besides its input. */
typedef struct {
	const char *tool_name;
	const char *tool_call_id;
	const char *cwd; /* the directory the call runs in */
	int cancelled;   /* set once pi_emit learned the call was cancelled */
} pi_tool_ctx;

PI_IMPORT("emit") int32_t pi__host_emit(const char *ptr, int32_t len);

/* pi_emit sends a partial result (progress for the UI and the event
 * stream; never sent to the model: its content and details count,
 * is_error and terminate do not). It returns 1 when the call was
 * cancelled or timed out: the tool should stop and return. */
static int pi_emit(pi_tool_ctx *ctx, const pi_result *partial) {
	pi_buf b = {0};
	pi__result_write(&b, partial, 0);
	if (b.oom) {
		pi_buf_free(&b);
		pi_log(PI_WARN, "emit from tool %s: out of memory", ctx && ctx->tool_name ? ctx->tool_name : "");
		return ctx ? ctx->cancelled : 0;
	}
	int32_t rc = pi__host_emit(b.p, (int32_t)b.n);
	pi_buf_free(&b);
	if (rc < 0) pi_log(PI_WARN, "emit from tool %s: the host answered %d", ctx && ctx->tool_name ? ctx->tool_name : "", (int)rc);
	if (rc == 1 && ctx) ctx->cancelled = 1;
	return rc == 1 || (ctx && ctx->cancelled);
}

/* ---- ABI 1.2 host calls ---------------------------------------------------- */

/*
 * The host methods ABI 1.2 adds (docs/abi.md, "ABI 1.2"): ui dialogs,
 * statuses, widgets, title, editor text and components; session; agent;
 * tools; model; llm.complete; flags; timers; watches; bus; shutdown and
 * reload. Same rules as the 1.1 calls: 0 on success, 1 with the reason in
 * pi_host_error(). They need a 1.2 host (pi_abi_minor() >= 2); an older
 * one answers them with an error ("unknown host method ...").
 */

static void pi__member_bool(pi_buf *b, int *first, const char *key, int v) {
	pi__key(b, first, key);
	pi_buf_cstr(b, v ? "true" : "false");
}

static void pi__member_int(pi_buf *b, int *first, const char *key, int64_t v) {
	pi__key(b, first, key);
	pi_buf_printf(b, "%lld", (long long)v);
}

/* pi__member_nstr writes key: s, or key: null when s is NULL. */
static void pi__member_nstr(pi_buf *b, int *first, const char *key, const char *s) {
	pi__key(b, first, key);
	if (s) pi_buf_json_str(b, s);
	else pi_buf_cstr(b, "null");
}

static void pi__member_strs(pi_buf *b, int *first, const char *key, const char *const *list) {
	int lf = 1;
	pi__key(b, first, key);
	pi_buf_raw(b, "[", 1);
	for (const char *const *s = list; s && *s; s++) {
		if (!lf) pi_buf_raw(b, ",", 1);
		lf = 0;
		pi_buf_json_str(b, *s);
	}
	pi_buf_raw(b, "]", 1);
}

/* pi__get_str copies the string member key of the JSON object in res to
 * out (emptied first; nothing for null or absent). */
static void pi__get_str(const pi_buf *res, const char *key, pi_buf *out) {
	size_t n;
	pi__buf_reset(out);
	pi_buf_raw(out, "", 0);
	char *s = pi_json_str_len(pi_json_get(pi_json_parse(res->p, res->n), key), &n);
	if (s) pi_buf_raw(out, s, n);
	free(s);
}

static int64_t pi__get_int(const pi_buf *res, const char *key, int64_t absent) {
	double d;
	if (!pi_json_num(pi_json_get(pi_json_parse(res->p, res->n), key), &d)) return absent;
	return (int64_t)d;
}

/* pi__get_json copies the JSON member key of res to out (fallback when
 * absent or null). */
static void pi__get_json(const pi_buf *res, const char *key, const char *fallback, pi_buf *out) {
	pi__buf_reset(out);
	pi_json v = pi_json_get(pi_json_parse(res->p, res->n), key);
	if (v.p && pi_json_kind(v) != PI_NULL) pi_buf_raw(out, v.p, v.n);
	else pi_buf_cstr(out, fallback);
}

/* ---- lines */

/*
 * A pi_lines is a list of lines to show (a widget, a component, a render):
 * each line plain text (pi_lines_text) or styled spans (pi_lines_span ...
 * pi_lines_end). Styles are space-separated names from: accent muted dim
 * success warning error border selected bold italic underline inverse.
 * pi draws them in its theme and removes control characters: never write
 * escape sequences.
 */
typedef struct {
	pi_buf json; /* the lines written so far, separated by commas */
	size_t count;
	int open; /* a span line is open: 1 + its spans */
} pi_lines;

/* pi_lines_end ends the span line being written (if any). */
static void pi_lines_end(pi_lines *l) {
	if (!l->open) return;
	pi_buf_raw(&l->json, "]", 1);
	l->open = 0;
}

/* pi_lines_textn adds a plain line of s[0..n). */
static void pi_lines_textn(pi_lines *l, const char *s, size_t n) {
	pi_lines_end(l);
	if (l->count++) pi_buf_raw(&l->json, ",", 1);
	pi_buf_json_strn(&l->json, s ? s : "", s ? n : 0);
}

static void pi_lines_text(pi_lines *l, const char *s) { pi_lines_textn(l, s, s ? strlen(s) : 0); }

/* pi_lines_printf adds a printf-formatted plain line. */
static void pi_lines_printf(pi_lines *l, const char *fmt, ...) {
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) n = 0;
	if ((size_t)n >= sizeof small) n = (int)sizeof small - 1;
	pi_lines_textn(l, small, (size_t)n);
}

/* pi_lines_span adds a span to the current span line (starting one when
 * none is open); style may be NULL. End the line with pi_lines_end (or by
 * adding the next plain line). */
static void pi_lines_span(pi_lines *l, const char *text, const char *style) {
	if (!l->open) {
		if (l->count++) pi_buf_raw(&l->json, ",", 1);
		pi_buf_raw(&l->json, "[", 1);
		l->open = 1;
	}
	if (l->open++ > 1) pi_buf_raw(&l->json, ",", 1);
	pi_buf_cstr(&l->json, "{\"text\":");
	pi_buf_json_str(&l->json, text ? text : "");
	if (style && *style) {
		pi_buf_cstr(&l->json, ",\"style\":");
		pi_buf_json_str(&l->json, style);
	}
	pi_buf_raw(&l->json, "}", 1);
}

/* pi_lines_newline ends the current span line; the next span starts
 * another. */
static void pi_lines_newline(pi_lines *l) { pi_lines_end(l); }

static void pi_lines_free(pi_lines *l) {
	pi_buf_free(&l->json);
	l->count = 0;
	l->open = 0;
}

/* pi__lines_write writes the lines as a JSON array. */
static void pi__lines_write(pi_buf *out, const pi_lines *l) {
	pi_buf_raw(out, "[", 1);
	if (l && l->json.n) pi_buf_raw(out, l->json.p, l->json.n);
	if (l && l->open) pi_buf_raw(out, "]", 1);
	pi_buf_raw(out, "]", 1);
	if (l) out->oom |= l->json.oom;
}

/* ---- ui */

/* The answer of a dialog: has_value is 0 when value is null, with reason
 * "cancelled", "timeout" or "no-ui". Free value with pi_buf_free. */
typedef struct {
	int has_value;
	pi_buf value;
	char reason[16];
} pi_dialog;

static int pi__dialog(const char *method, pi_buf *req, const char *bad, pi_dialog *out) {
	pi_buf res = {0};
	int rc = pi__send_built(method, req, bad, &res);
	pi__buf_reset(&out->value);
	out->has_value = 0;
	out->reason[0] = 0;
	if (!rc) {
		pi_json r = pi_json_parse(res.p, res.n);
		size_t n;
		char *v = pi_json_str_len(pi_json_get(r, "value"), &n);
		pi_buf_raw(&out->value, "", 0);
		if (v) {
			out->has_value = 1;
			pi_buf_raw(&out->value, v, n);
		}
		free(v);
		char *why = pi_json_str(pi_json_get(r, "reason"));
		if (why) snprintf(out->reason, sizeof out->reason, "%s", why);
		free(why);
	}
	pi_buf_free(&res);
	return rc;
}

static const char *pi__req_ui_select(pi_buf *b, const char *title, const char *const *options, int64_t timeout_ms) {
	int f = 1;
	pi__request_begin(b, "ui.select");
	pi__member_str(b, &f, "title", title);
	pi__member_strs(b, &f, "options", options);
	pi__member_ms(b, &f, "timeoutMs", timeout_ms);
	return options && options[0] ? NULL : "options is empty";
}

static const char *pi__req_ui_input(pi_buf *b, const char *title, const char *placeholder, int64_t timeout_ms) {
	int f = 1;
	pi__request_begin(b, "ui.input");
	pi__member_str(b, &f, "title", title);
	if (placeholder && *placeholder) pi__member_str(b, &f, "placeholder", placeholder);
	pi__member_ms(b, &f, "timeoutMs", timeout_ms);
	return NULL;
}

static const char *pi__req_ui_editor(pi_buf *b, const char *title, const char *prefill, int64_t timeout_ms) {
	int f = 1;
	pi__request_begin(b, "ui.editor");
	pi__member_str(b, &f, "title", title);
	if (prefill && *prefill) pi__member_str(b, &f, "prefill", prefill);
	pi__member_ms(b, &f, "timeoutMs", timeout_ms);
	return NULL;
}

/* pi_ui_select asks the person to choose one of options (ended by NULL);
 * the value is the option chosen. */
static int pi_ui_select(const char *title, const char *const *options, int64_t timeout_ms, pi_dialog *out) {
	pi_buf req = {0};
	return pi__dialog("ui.select", &req, pi__req_ui_select(&req, title, options, timeout_ms), out);
}

/* pi_ui_input asks the person for one line. */
static int pi_ui_input(const char *title, const char *placeholder, int64_t timeout_ms, pi_dialog *out) {
	pi_buf req = {0};
	return pi__dialog("ui.input", &req, pi__req_ui_input(&req, title, placeholder, timeout_ms), out);
}

/* pi_ui_editor asks the person for a text of several lines. */
static int pi_ui_editor(const char *title, const char *prefill, int64_t timeout_ms, pi_dialog *out) {
	pi_buf req = {0};
	return pi__dialog("ui.editor", &req, pi__req_ui_editor(&req, title, prefill, timeout_ms), out);
}

static void pi_dialog_free(pi_dialog *d) { pi_buf_free(&d->value); }

static const char *pi__req_ui_set_status(pi_buf *b, const char *key, const char *text, const pi_lines *line) {
	int f = 1;
	pi__request_begin(b, "ui.setStatus");
	pi__member_str(b, &f, "key", key);
	pi__key(b, &f, "text");
	if (line && line->count) {
		pi_buf all = {0};
		pi__lines_write(&all, line);
		pi_buf_json(b, pi_json_at(pi_json_parse(all.p, all.n), 0));
		pi_buf_free(&all);
	} else if (text) {
		pi_buf_json_str(b, text);
	} else {
		pi_buf_cstr(b, "null");
	}
	return NULL;
}

/* pi_ui_set_status sets this extension's status key to text (NULL clears
 * it): shown on the status line after pi's own. */
static int pi_ui_set_status(const char *key, const char *text) {
	pi_buf req = {0};
	return pi__send_built("ui.setStatus", &req, pi__req_ui_set_status(&req, key, text, NULL), NULL);
}

/* pi_ui_set_status_line sets the status to the first line of line (spans
 * with styles). */
static int pi_ui_set_status_line(const char *key, const pi_lines *line) {
	pi_buf req = {0};
	return pi__send_built("ui.setStatus", &req, pi__req_ui_set_status(&req, key, NULL, line), NULL);
}

static const char *pi__req_ui_set_widget(pi_buf *b, const char *key, const pi_lines *lines, const char *placement) {
	int f = 1;
	pi__request_begin(b, "ui.setWidget");
	pi__member_str(b, &f, "key", key);
	pi__key(b, &f, "lines");
	if (lines) pi__lines_write(b, lines);
	else pi_buf_cstr(b, "null");
	if (placement && *placement) pi__member_str(b, &f, "placement", placement);
	return NULL;
}

/* Placements of widgets and widget components. */
#define PI_ABOVE_EDITOR "aboveEditor"
#define PI_BELOW_EDITOR "belowEditor"

/* pi_ui_set_widget shows lines (at most 10) above or below the editor
 * under key; NULL lines remove the widget. placement NULL: above. */
static int pi_ui_set_widget(const char *key, const pi_lines *lines, const char *placement) {
	pi_buf req = {0};
	return pi__send_built("ui.setWidget", &req, pi__req_ui_set_widget(&req, key, lines, placement), NULL);
}

static const char *pi__req_ui_one(pi_buf *b, const char *method, const char *key, const char *s, int nullable) {
	int f = 1;
	pi__request_begin(b, method);
	if (nullable) pi__member_nstr(b, &f, key, s);
	else pi__member_str(b, &f, key, s);
	return NULL;
}

/* pi_ui_set_title sets the terminal's title (at most 100 characters). */
static int pi_ui_set_title(const char *title) {
	pi_buf req = {0};
	return pi__send_built("ui.setTitle", &req, pi__req_ui_one(&req, "ui.setTitle", "title", title, 0), NULL);
}

/* pi_ui_set_working_message sets the text shown while the model works
 * (NULL: pi's own). */
static int pi_ui_set_working_message(const char *text) {
	pi_buf req = {0};
	return pi__send_built("ui.setWorkingMessage", &req, pi__req_ui_one(&req, "ui.setWorkingMessage", "text", text, 1), NULL);
}

/* pi_ui_set_editor_text replaces the text in pi's editor. */
static int pi_ui_set_editor_text(const char *text) {
	pi_buf req = {0};
	return pi__send_built("ui.setEditorText", &req, pi__req_ui_one(&req, "ui.setEditorText", "text", text, 0), NULL);
}

/* pi_ui_get_editor_text writes the editor's text to text ("" where there
 * is no editor). */
static int pi_ui_get_editor_text(pi_buf *text) {
	pi_buf req = {0}, res = {0};
	pi__request_begin(&req, "ui.getEditorText");
	int rc = pi__send_built("ui.getEditorText", &req, NULL, &res);
	if (!rc) pi__get_str(&res, "text", text);
	else pi__buf_reset(text);
	pi_buf_free(&res);
	return rc;
}

/* Component slots. */
#define PI_SLOT_OVERLAY "overlay"
#define PI_SLOT_WIDGET "widget"
#define PI_SLOT_HEADER "header"
#define PI_SLOT_FOOTER "footer"
#define PI_SLOT_EDITOR "editor"

/* Where and how a component opens. */
typedef struct {
	const char *slot;      /* PI_SLOT_... */
	const char *key;       /* widgets: the widget's key */
	const char *placement; /* widgets: PI_ABOVE_EDITOR or PI_BELOW_EDITOR */
	int max_height;        /* overlays: at most this many lines (0: half the screen) */
} pi_component_opts;

static const char *pi__req_ui_component(pi_buf *b, const pi_component_opts *o) {
	int f = 1;
	pi__request_begin(b, "ui.component");
	pi__member_str(b, &f, "slot", o ? o->slot : "");
	if (o && o->key && *o->key) pi__member_str(b, &f, "key", o->key);
	if (o && o->placement && *o->placement) pi__member_str(b, &f, "placement", o->placement);
	if (o && o->max_height > 0) pi__member_int(b, &f, "maxHeight", o->max_height);
	return o && o->slot && *o->slot ? NULL : "no slot";
}

/* pi_ui_component opens a component drawn by the extension
 * (pi_ext.component_render, _input, _dispose) and writes its id to id;
 * id is left empty when pi's terminal UI does not run (reason "no-tui"). */
static int pi_ui_component(const pi_component_opts *o, pi_buf *id) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("ui.component", &req, pi__req_ui_component(&req, o), &res);
	if (!rc) pi__get_str(&res, "id", id);
	else pi__buf_reset(id);
	pi_buf_free(&res);
	return rc;
}

/* pi_ui_rerender has pi render the component id again. */
static int pi_ui_rerender(const char *id) {
	pi_buf req = {0};
	return pi__send_built("ui.rerender", &req, pi__req_ui_one(&req, "ui.rerender", "id", id, 0), NULL);
}

/* pi_ui_close closes the component id (its dispose is called). */
static int pi_ui_close(const char *id) {
	pi_buf req = {0};
	return pi__send_built("ui.close", &req, pi__req_ui_one(&req, "ui.close", "id", id, 0), NULL);
}

/* ---- session */

/* What session.info answers; null fields are empty. Free with
 * pi_session_info_free. */
typedef struct {
	pi_buf session_id, session_file, name, leaf_id;
} pi_session_info_t;

static void pi_session_info_free(pi_session_info_t *s) {
	pi_buf_free(&s->session_id);
	pi_buf_free(&s->session_file);
	pi_buf_free(&s->name);
	pi_buf_free(&s->leaf_id);
}

static int pi__simple(const char *method, pi_buf *res) {
	pi_buf req = {0};
	pi__request_begin(&req, method);
	return pi__send_built(method, &req, NULL, res);
}

/* pi_session_info: the session's id, file (empty with --no-session), name
 * and current leaf entry. */
static int pi_session_info(pi_session_info_t *out) {
	pi_buf res = {0};
	int rc = pi__simple("session.info", &res);
	pi__get_str(&res, "sessionId", &out->session_id);
	pi__get_str(&res, "sessionFile", &out->session_file);
	pi__get_str(&res, "name", &out->name);
	pi__get_str(&res, "leafId", &out->leaf_id);
	pi_buf_free(&res);
	return rc;
}

/* pi_session_branch writes the entries from the root to the leaf (the
 * last limit of them; 0: all) as a JSON array of session-file entries. */
static int pi_session_branch(int limit, pi_buf *entries) {
	pi_buf req = {0}, res = {0};
	int f = 1;
	pi__request_begin(&req, "session.branch");
	if (limit > 0) pi__member_int(&req, &f, "limit", limit);
	int rc = pi__send_built("session.branch", &req, NULL, &res);
	pi__get_json(&res, "entries", "[]", entries);
	pi_buf_free(&res);
	return rc;
}

/* pi_session_tree writes every entry, in file order, as a JSON array. */
static int pi_session_tree(pi_buf *entries) {
	pi_buf res = {0};
	int rc = pi__simple("session.tree", &res);
	pi__get_json(&res, "entries", "[]", entries);
	pi_buf_free(&res);
	return rc;
}

/* pi_session_set_name names the session. */
static int pi_session_set_name(const char *name) {
	pi_buf req = {0};
	return pi__send_built("session.setName", &req, pi__req_ui_one(&req, "session.setName", "name", name, 0), NULL);
}

static const char *pi__req_session_set_label(pi_buf *b, const char *entry_id, const char *label) {
	int f = 1;
	pi__request_begin(b, "session.setLabel");
	pi__member_str(b, &f, "entryId", entry_id);
	pi__member_nstr(b, &f, "label", label);
	return NULL;
}

/* pi_session_set_label labels an entry (NULL removes the label). */
static int pi_session_set_label(const char *entry_id, const char *label) {
	pi_buf req = {0};
	return pi__send_built("session.setLabel", &req, pi__req_session_set_label(&req, entry_id, label), NULL);
}

/* How full the context is: tokens and percent are -1 when unknown. */
typedef struct {
	int64_t tokens, context_window;
	double percent;
} pi_context_usage;

/* pi_session_context_usage: the tokens the context holds now. */
static int pi_session_context_usage(pi_context_usage *out) {
	pi_buf res = {0};
	int rc = pi__simple("session.contextUsage", &res);
	out->tokens = pi__get_int(&res, "tokens", -1);
	out->context_window = pi__get_int(&res, "contextWindow", 0);
	out->percent = -1;
	pi_json_num(pi_json_get(pi_json_parse(res.p, res.n), "percent"), &out->percent);
	pi_buf_free(&res);
	return rc;
}

/* pi_session_compact asks for a compaction (done when pi is idle). */
static int pi_session_compact(const char *custom_instructions) {
	pi_buf req = {0};
	int f = 1;
	pi__request_begin(&req, "session.compact");
	if (custom_instructions && *custom_instructions) pi__member_str(&req, &f, "customInstructions", custom_instructions);
	return pi__send_built("session.compact", &req, NULL, NULL);
}

static int pi__cancelled(const char *method, pi_buf *req, const char *bad, int *cancelled) {
	pi_buf res = {0};
	int rc = pi__send_built(method, req, bad, &res);
	if (cancelled) *cancelled = !rc && pi_json_true(pi_json_get(pi_json_parse(res.p, res.n), "cancelled"));
	pi_buf_free(&res);
	return rc;
}

/* The session-changing calls, from a command or a shortcut only. Each
 * sets *cancelled (may be NULL) when an extension's session_before_* hook
 * cancelled it. */
static int pi_session_new(int *cancelled) {
	pi_buf req = {0};
	pi__request_begin(&req, "session.new");
	return pi__cancelled("session.new", &req, NULL, cancelled);
}

static int pi_session_switch(const char *session_path, int *cancelled) {
	pi_buf req = {0};
	return pi__cancelled("session.switch", &req, pi__req_ui_one(&req, "session.switch", "sessionPath", session_path, 0), cancelled);
}

static int pi_session_fork(const char *entry_id, int *cancelled) {
	pi_buf req = {0};
	return pi__cancelled("session.fork", &req, pi__req_ui_one(&req, "session.fork", "entryId", entry_id, 0), cancelled);
}

static const char *pi__req_session_navigate(pi_buf *b, const char *target_id, int summarize) {
	int f = 1;
	pi__request_begin(b, "session.navigate");
	pi__member_str(b, &f, "targetId", target_id);
	if (summarize) pi__member_bool(b, &f, "summarize", 1);
	return NULL;
}

/* pi_session_navigate moves the leaf to target_id, first summarizing the
 * branch left when summarize is set. */
static int pi_session_navigate(const char *target_id, int summarize, int *cancelled) {
	pi_buf req = {0};
	return pi__cancelled("session.navigate", &req, pi__req_session_navigate(&req, target_id, summarize), cancelled);
}

/* ---- agent */

/* How a message sent during a run is delivered (NULL: the default). */
#define PI_STEER "steer"
#define PI_FOLLOW_UP "followUp"
#define PI_NEXT_TURN "nextTurn"

static const char *pi__req_send_user(pi_buf *b, const char *text, const pi_result *blocks, const char *deliver_as) {
	int f = 1;
	pi__request_begin(b, "agent.sendUserMessage");
	pi__key(b, &f, "content");
	if (blocks) {
		pi_buf_raw(b, "[", 1);
		if (blocks->content.n) pi_buf_raw(b, blocks->content.p, blocks->content.n);
		pi_buf_raw(b, "]", 1);
	} else {
		pi_buf_json_str(b, text ? text : "");
	}
	if (deliver_as && *deliver_as) pi__member_str(b, &f, "deliverAs", deliver_as);
	return NULL;
}

/* pi_agent_send_user_message sends text as the user's message: idle, it
 * starts a run once the current call returns; in a run it is queued as
 * PI_STEER (the default) or PI_FOLLOW_UP. */
static int pi_agent_send_user_message(const char *text, const char *deliver_as) {
	pi_buf req = {0};
	return pi__send_built("agent.sendUserMessage", &req, pi__req_send_user(&req, text, NULL, deliver_as), NULL);
}

/* pi_agent_send_user_blocks is pi_agent_send_user_message with content
 * blocks (text and images: the content of a pi_result). */
static int pi_agent_send_user_blocks(const pi_result *blocks, const char *deliver_as) {
	pi_buf req = {0};
	return pi__send_built("agent.sendUserMessage", &req, pi__req_send_user(&req, NULL, blocks, deliver_as), NULL);
}

/* A custom message (a custom_message entry the model sees as a user
 * message). */
typedef struct {
	const char *custom_type;
	const char *text;         /* the content as one string... */
	const pi_result *blocks;  /* ...or as blocks (then text is unused) */
	int display;              /* show it in the transcript */
	const char *details;      /* JSON for a message renderer; NULL: none */
	int trigger_turn;         /* idle: start a run */
	const char *deliver_as;   /* PI_STEER (default), PI_FOLLOW_UP, PI_NEXT_TURN */
} pi_message;

static const char *pi__req_send_message(pi_buf *b, const pi_message *m) {
	int f = 1;
	pi__request_begin(b, "agent.sendMessage");
	pi__member_str(b, &f, "customType", m->custom_type);
	pi__key(b, &f, "content");
	if (m->blocks) {
		pi_buf_raw(b, "[", 1);
		if (m->blocks->content.n) pi_buf_raw(b, m->blocks->content.p, m->blocks->content.n);
		pi_buf_raw(b, "]", 1);
	} else {
		pi_buf_json_str(b, m->text ? m->text : "");
	}
	if (m->display) pi__member_bool(b, &f, "display", 1);
	if (m->details && pi__member_json(b, &f, "details", m->details)) return "the details are not one JSON value";
	if (m->trigger_turn) pi__member_bool(b, &f, "triggerTurn", 1);
	if (m->deliver_as && *m->deliver_as) pi__member_str(b, &f, "deliverAs", m->deliver_as);
	return NULL;
}

/* pi_agent_send_message adds a custom message to the conversation. */
static int pi_agent_send_message(const pi_message *m) {
	pi_buf req = {0};
	return pi__send_built("agent.sendMessage", &req, pi__req_send_message(&req, m), NULL);
}

/* pi_agent_abort stops the current run. */
static int pi_agent_abort(void) { return pi__simple("agent.abort", NULL); }

/* What agent.state answers. Free system_prompt with pi_buf_free. */
typedef struct {
	int idle;
	int64_t pending_messages;
	pi_buf system_prompt;
} pi_agent_state_t;

static int pi_agent_state(pi_agent_state_t *out) {
	pi_buf res = {0};
	int rc = pi__simple("agent.state", &res);
	out->idle = !rc && pi_json_true(pi_json_get(pi_json_parse(res.p, res.n), "idle"));
	out->pending_messages = pi__get_int(&res, "pendingMessages", 0);
	pi__get_str(&res, "systemPrompt", &out->system_prompt);
	pi_buf_free(&res);
	return rc;
}

/* ---- tools */

/* pi_tools_list writes every tool as a JSON array of {"name",
 * "description", "source", "active"}. */
static int pi_tools_list(pi_buf *tools) {
	pi_buf res = {0};
	int rc = pi__simple("tools.list", &res);
	pi__get_json(&res, "tools", "[]", tools);
	pi_buf_free(&res);
	return rc;
}

static const char *pi__req_names(pi_buf *b, const char *method, const char *const *names) {
	int f = 1;
	pi__request_begin(b, method);
	pi__member_strs(b, &f, "names", names);
	return NULL;
}

/* pi_tools_set_active makes names (ended by NULL) the active tools from
 * the next model request. */
static int pi_tools_set_active(const char *const *names) {
	pi_buf req = {0};
	return pi__send_built("tools.setActive", &req, pi__req_names(&req, "tools.setActive", names), NULL);
}

/* pi_tools_register adds tools (a JSON array of ToolSpec, as in the
 * declaration), active at once; tool.execute calls reach pi_ext.execute
 * or pi_ext.tool. */
static int pi_tools_register(const char *tool_specs) {
	pi_buf req = {0};
	int f = 1;
	pi__request_begin(&req, "tools.register");
	const char *bad = pi__member_json(&req, &f, "tools", tool_specs ? tool_specs : "") ? "the tools are not one JSON value" : NULL;
	return pi__send_built("tools.register", &req, bad, NULL);
}

/* pi_tools_unregister removes tools this extension registered. */
static int pi_tools_unregister(const char *const *names) {
	pi_buf req = {0};
	return pi__send_built("tools.unregister", &req, pi__req_names(&req, "tools.unregister", names), NULL);
}

/* ---- model */

/* What model.get answers. Free with pi_model_info_free. */
typedef struct {
	pi_buf provider, id;
	int64_t context_window;
	char thinking_level[16];
} pi_model_info;

static void pi_model_info_free(pi_model_info *m) {
	pi_buf_free(&m->provider);
	pi_buf_free(&m->id);
}

static int pi_model_get(pi_model_info *out) {
	pi_buf res = {0}, lvl = {0};
	int rc = pi__simple("model.get", &res);
	pi__get_str(&res, "provider", &out->provider);
	pi__get_str(&res, "id", &out->id);
	out->context_window = pi__get_int(&res, "contextWindow", 0);
	pi__get_str(&res, "thinkingLevel", &lvl);
	snprintf(out->thinking_level, sizeof out->thinking_level, "%s", lvl.p ? lvl.p : "");
	pi_buf_free(&lvl);
	pi_buf_free(&res);
	return rc;
}

/* pi_model_list writes the models as a JSON array of {"provider", "id"}. */
static int pi_model_list(pi_buf *models) {
	pi_buf res = {0};
	int rc = pi__simple("model.list", &res);
	pi__get_json(&res, "models", "[]", models);
	pi_buf_free(&res);
	return rc;
}

static const char *pi__req_model_set(pi_buf *b, const char *provider, const char *id) {
	int f = 1;
	pi__request_begin(b, "model.set");
	if (provider && *provider) pi__member_str(b, &f, "provider", provider);
	pi__member_str(b, &f, "id", id);
	return NULL;
}

/* pi_model_set switches the model (grants.model); provider may be NULL. */
static int pi_model_set(const char *provider, const char *id) {
	pi_buf req = {0};
	return pi__send_built("model.set", &req, pi__req_model_set(&req, provider, id), NULL);
}

/* pi_model_set_thinking_level sets the thinking level (off, minimal, low,
 * medium, high, xhigh; grants.model) and writes the level applied to
 * applied (may be NULL), clamped to the model's. */
static int pi_model_set_thinking_level(const char *level, char applied[16]) {
	pi_buf req = {0}, res = {0}, got = {0};
	int rc = pi__send_built("model.setThinkingLevel", &req, pi__req_ui_one(&req, "model.setThinkingLevel", "level", level, 0), &res);
	if (applied) {
		pi__get_str(&res, "level", &got);
		snprintf(applied, 16, "%s", got.p ? got.p : "");
	}
	pi_buf_free(&got);
	pi_buf_free(&res);
	return rc;
}

/* ---- llm */

/* A request to the configured model (grants.llm; counts against
 * limits.llm_tokens). */
typedef struct {
	const char *system_prompt; /* NULL: none */
	const char *prompt;        /* one user message... */
	const char *messages;      /* ...or a JSON array of {"role": "user"|"assistant", "content"} */
	int64_t max_tokens;        /* 0: the model's default */
} pi_llm_request;

/* The model's answer. Free with pi_llm_response_free. */
typedef struct {
	pi_buf text;    /* the text blocks, joined by newlines */
	pi_buf content; /* the blocks as a JSON array */
	char stop_reason[32];
	int64_t input_tokens, output_tokens;
} pi_llm_response;

static void pi_llm_response_free(pi_llm_response *r) {
	pi_buf_free(&r->text);
	pi_buf_free(&r->content);
}

static const char *pi__req_llm(pi_buf *b, const pi_llm_request *r) {
	int f = 1;
	pi__request_begin(b, "llm.complete");
	if (r->system_prompt && *r->system_prompt) pi__member_str(b, &f, "systemPrompt", r->system_prompt);
	if (r->messages) {
		if (pi__member_json(b, &f, "messages", r->messages)) return "the messages are not one JSON value";
	} else {
		pi__key(b, &f, "messages");
		pi_buf_cstr(b, "[{\"role\":\"user\",\"content\":");
		pi_buf_json_str(b, r->prompt ? r->prompt : "");
		pi_buf_cstr(b, "}]");
	}
	if (r->max_tokens > 0) pi__member_int(b, &f, "maxTokens", r->max_tokens);
	return NULL;
}

/* pi_llm_complete sends system_prompt and the messages, no tools, to the
 * configured model; nothing is saved or shown. */
static int pi_llm_complete(const pi_llm_request *r, pi_llm_response *out) {
	pi_buf req = {0}, res = {0}, why = {0};
	int rc = pi__send_built("llm.complete", &req, pi__req_llm(&req, r), &res);
	pi__get_json(&res, "content", "[]", &out->content);
	pi__buf_reset(&out->text);
	pi_buf_raw(&out->text, "", 0);
	pi_json blk;
	size_t i = 0, n;
	int first = 1;
	pi_json content = pi_json_parse(out->content.p, out->content.n);
	while (pi_json_next(content, &i, NULL, &blk)) {
		if (!pi_json_eq(pi_json_get(blk, "type"), "text")) continue;
		char *t = pi_json_str_len(pi_json_get(blk, "text"), &n);
		if (!first) pi_buf_raw(&out->text, "\n", 1);
		first = 0;
		if (t) pi_buf_raw(&out->text, t, n);
		free(t);
	}
	pi__get_str(&res, "stopReason", &why);
	snprintf(out->stop_reason, sizeof out->stop_reason, "%s", why.p ? why.p : "");
	pi_json usage = pi_json_get(pi_json_parse(res.p, res.n), "usage");
	double d = 0;
	out->input_tokens = pi_json_num(pi_json_get(usage, "input"), &d) ? (int64_t)d : 0;
	out->output_tokens = pi_json_num(pi_json_get(usage, "output"), &d) ? (int64_t)d : 0;
	pi_buf_free(&why);
	pi_buf_free(&res);
	return rc;
}

/* ---- flags, timers, watches, bus, shutdown, reload */

/* pi_flags_get writes the extension's flags as a JSON object {NAME:
 * value}: as given on the command line, else their default, else false
 * (booleans) or null (strings). */
static int pi_flags_get(pi_buf *flags) {
	pi_buf res = {0};
	int rc = pi__simple("flags.get", &res);
	pi__get_json(&res, "flags", "{}", flags);
	pi_buf_free(&res);
	return rc;
}

/* pi_flag_bool reads a boolean flag from what pi_flags_get wrote. */
static int pi_flag_bool(const pi_buf *flags, const char *name) {
	return pi_json_true(pi_json_get(pi_json_parse(flags->p, flags->n), name));
}

/* pi_flag_str reads a string flag (NULL when null), from malloc. */
static char *pi_flag_str(const pi_buf *flags, const char *name) {
	return pi_json_str(pi_json_get(pi_json_parse(flags->p, flags->n), name));
}

static const char *pi__req_timer_set(pi_buf *b, int64_t ms, int repeat) {
	int f = 1;
	pi__request_begin(b, "timer.set");
	pi__member_int(b, &f, "ms", ms);
	if (repeat) pi__member_bool(b, &f, "repeat", 1);
	return NULL;
}

/* pi_timer_set starts a timer of ms (at least 10) milliseconds, repeating
 * or not, and writes its id to id; pi_ext.timer is called when it fires. */
static int pi_timer_set(int64_t ms, int repeat, pi_buf *id) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("timer.set", &req, pi__req_timer_set(&req, ms, repeat), &res);
	pi__get_str(&res, "id", id);
	pi_buf_free(&res);
	return rc;
}

/* pi_timer_clear stops a timer. */
static int pi_timer_clear(const char *id) {
	pi_buf req = {0};
	return pi__send_built("timer.clear", &req, pi__req_ui_one(&req, "timer.clear", "id", id, 0), NULL);
}

static const char *pi__req_watch_add(pi_buf *b, const char *path, int recursive) {
	int f = 1;
	pi__request_begin(b, "watch.add");
	pi__member_str(b, &f, "path", path);
	if (recursive) pi__member_bool(b, &f, "recursive", 1);
	return NULL;
}

/* pi_watch_add watches path (in the extension's fs grants) and writes the
 * watch's id to id; pi_ext.watch gets the changed paths. */
static int pi_watch_add(const char *path, int recursive, pi_buf *id) {
	pi_buf req = {0}, res = {0};
	int rc = pi__send_built("watch.add", &req, pi__req_watch_add(&req, path, recursive), &res);
	pi__get_str(&res, "id", id);
	pi_buf_free(&res);
	return rc;
}

/* pi_watch_remove stops a watch. */
static int pi_watch_remove(const char *id) {
	pi_buf req = {0};
	return pi__send_built("watch.remove", &req, pi__req_ui_one(&req, "watch.remove", "id", id, 0), NULL);
}

static const char *pi__req_bus_emit(pi_buf *b, const char *channel, const char *data) {
	int f = 1;
	pi__request_begin(b, "bus.emit");
	pi__member_str(b, &f, "channel", channel);
	if (pi__member_json(b, &f, "data", data ? data : "null")) return "the data is not one JSON value";
	return NULL;
}

/* pi_bus_emit sends data (the text of one JSON value) on channel to every
 * other extension that lists it. */
static int pi_bus_emit(const char *channel, const char *data) {
	pi_buf req = {0};
	return pi__send_built("bus.emit", &req, pi__req_bus_emit(&req, channel, data), NULL);
}

/* pi_shutdown ends pi when the command or shortcut returns. */
static int pi_shutdown(void) { return pi__simple("pi.shutdown", NULL); }

/* pi_reload loads every extension again when idle. */
static int pi_reload(void) { return pi__simple("pi.reload", NULL); }

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

/* What a bash_spawn hook changes; what it leaves empty stays. */
typedef struct {
	pi_buf command, cwd;
	pi_buf env; /* a JSON object {"NAME": "value"}: replaces the variables the hook was shown */
} pi_bash_spawn;

/* Flags of a component_input answer. */
enum { PI_CONSUMED = 1, PI_CLOSE = 2, PI_RERENDER = 4 };

/* Answers of the user_bash hook (ABI 1.2). */
enum { PI_BASH_PASS = 0, PI_BASH_REPLACE = 1, PI_BASH_BLOCK = 2, PI_BASH_RESULT = 3 };

/* What a user_bash hook answers: the new command (PI_BASH_REPLACE), the
 * reason (PI_BASH_BLOCK) or the output (PI_BASH_RESULT, with exit_code). */
typedef struct {
	pi_buf text;
	int exit_code;
} pi_user_bash;

/* Answers of the session_before_* hooks (ABI 1.2). */
enum { PI_SESSION_PASS = 0, PI_SESSION_CANCEL = 1, PI_SESSION_SUMMARY = 2 };

/* What a session_before_* hook answers: the reason (PI_SESSION_CANCEL),
 * or (compact and tree only, PI_SESSION_SUMMARY) the summary pi uses
 * without asking the model, with details (JSON, may stay empty). */
typedef struct {
	pi_buf text;
	pi_buf details;
} pi_session_before;

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

	/* ---- whole results and typed hooks (any host) ---- */

	/* One tool call with its whole result: add blocks to out
	 * (pi_result_text, pi_result_image), set details, terminate; report
	 * progress with pi_emit(ctx, partial). Return 0, or 1 to make it an
	 * error result (is_error). Used instead of tool when set. */
	int (*execute)(pi_tool_ctx *ctx, pi_json input, pi_result *out);
	/* The tool_result hook (declare "tool_result"): params is the finished
	 * call {"toolName", "toolCallId", "input", "content", "details",
	 * "isError"}. Fill patch to change the result: its content when it has
	 * blocks, its details when set, is_error when 0 or 1 (it starts at -1,
	 * which keeps it). NULL: pi_ext.other gets the hook. */
	void (*tool_result)(pi_json params, pi_result *patch);
	/* The bash_spawn hook (declare "bash_spawn"): env holds the granted
	 * variables the command would get. NULL: pi_ext.other gets it. */
	void (*bash_spawn)(const char *command, const char *cwd, pi_json env, pi_bash_spawn *change);
	/* Events (declare "event"): type and the whole event. NULL:
	 * pi_ext.other gets them. */
	void (*event)(const char *type, pi_json event);

	/* ---- ABI 1.2: used only with a 1.2 host (pi_abi_minor() >= 2) ---- */

	/* A component opened with pi_ui_component: draw it width columns
	 * wide into out. editor_text is the editor's text (an editor-slot
	 * component only; else NULL) with the cursor at rune offset cursor. */
	void (*component_render)(const char *id, int width, const char *editor_text, int cursor, pi_lines *out);
	/* A key for the focused component (an overlay or the editor slot):
	 * key as docs/abi.md names keys ("x", "ctrl+x", "enter", "paste" with
	 * text). Return PI_CONSUMED, PI_CLOSE, PI_RERENDER, or'ed (0: the
	 * editor slot hands the key to pi's editor). */
	int (*component_input)(const char *id, const char *key, const char *text);
	/* The component went away: reason "closed", "cancelled", "replaced"
	 * or "shutdown". */
	void (*component_dispose)(const char *id, const char *reason);
	/* A tool declared with "render": true: params are {"toolName",
	 * "toolCallId", "args", "result"?, "isPartial", "expanded", "width"}.
	 * Return 1 with the lines below pi's first line in out, or 0 for pi's
	 * drawing. */
	int (*tool_render)(pi_json params, pi_lines *out);
	/* A custom message of a type in "messageRenderers": params are
	 * {"customType", "content", "details", "expanded", "width"}; as
	 * tool_render. */
	int (*message_render)(pi_json params, pi_lines *out);
	/* A key declared in "shortcuts" was pressed. Return 0, or 1 with an
	 * error message in err (shown). */
	int (*shortcut)(const char *key, pi_buf *err);
	/* A timer from pi_timer_set fired. */
	void (*timer)(const char *id);
	/* A watch from pi_watch_add saw changes: paths is a JSON array of
	 * absolute paths. */
	void (*watch)(const char *id, pi_json paths);
	/* A message on a channel listed in "channels", from extension from. */
	void (*bus)(const char *channel, pi_json data, const char *from);
	/* The context hook: messages (a JSON array) about to go to the model.
	 * Return 1 with a replacement array in out, or 0 to keep them. */
	int (*context)(pi_json messages, pi_buf *out);
	/* The before_provider_request hook: payload is the JSON body pi is
	 * about to send. Return 1 with a replacement object in out (it needs
	 * grants.model), or 0. */
	int (*before_provider_request)(pi_json payload, pi_buf *out);
	/* The user_bash hook (a !COMMAND): return PI_BASH_PASS, or
	 * PI_BASH_REPLACE, PI_BASH_BLOCK, PI_BASH_RESULT with out filled. */
	int (*user_bash)(const char *command, const char *cwd, pi_user_bash *out);
	/* The session_before_switch, _fork, _compact and _tree hooks: which is
	 * "switch", "fork", "compact" or "tree", params the hook's params.
	 * Return PI_SESSION_PASS, PI_SESSION_CANCEL or PI_SESSION_SUMMARY. */
	int (*session_before)(const char *which, pi_json params, pi_session_before *out);
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

/* pi__hook12 reports whether a hook name is one ABI 1.2 added, and
 * whether pi_ext handles it. */
static int pi__hook12(pi_json name, int *handled) {
	if (pi_json_eq(name, "context")) *handled = pi_ext.context != NULL;
	else if (pi_json_eq(name, "before_provider_request")) *handled = pi_ext.before_provider_request != NULL;
	else if (pi_json_eq(name, "user_bash")) *handled = pi_ext.user_bash != NULL;
	else if (pi_json_eq(name, "session_before_switch") || pi_json_eq(name, "session_before_fork") ||
	         pi_json_eq(name, "session_before_compact") || pi_json_eq(name, "session_before_tree"))
		*handled = pi_ext.session_before != NULL;
	else return 0;
	*handled = *handled || pi_ext.other != NULL;
	return 1;
}

/* pi__event12 reports whether an event type is one ABI 1.2 added. */
static int pi__event12(pi_json name) {
	return pi_json_eq(name, "session_switch") || pi_json_eq(name, "session_fork") || pi_json_eq(name, "session_compact") ||
	       pi_json_eq(name, "session_tree") || pi_json_eq(name, "model_select");
}

/* pi__declare_tools writes the tools array without "render" for a host
 * older than 1.2. */
static void pi__declare_tools(pi_buf *out, pi_json tools, int v12, int *dropped) {
	pi_json t, k, v;
	size_t i = 0, j;
	int first = 1;
	pi_buf_raw(out, "[", 1);
	while (pi_json_next(tools, &i, NULL, &t)) {
		if (!first) pi_buf_raw(out, ",", 1);
		first = 0;
		if (v12 || pi_json_kind(t) != PI_OBJECT) {
			pi_buf_json(out, t);
			continue;
		}
		int mf = 1;
		pi_buf_raw(out, "{", 1);
		for (j = 0; pi_json_next(t, &j, &k, &v);) {
			if (pi_json_eq(k, "render")) { *dropped = 1; continue; }
			if (!mf) pi_buf_raw(out, ",", 1);
			mf = 0;
			pi_buf_json(out, k);
			pi_buf_raw(out, ":", 1);
			pi_buf_json(out, v);
		}
		pi_buf_raw(out, "}", 1);
	}
	pi_buf_raw(out, "]", 1);
}

/* pi__declare writes init's result: pi_ext.declaration without what an
 * older host refuses (1.1 parts for a 1.0 host, 1.2 parts for a 1.0 or
 * 1.1 host), plus the commands for a 1.1 host. It returns why the
 * declaration is wrong, or NULL. */
static const char *pi__declare(pi_buf *out) {
	const char *d = pi_ext.declaration ? pi_ext.declaration : "";
	pi_json decl = pi_json_parse(d, strlen(d)), k, v, e;
	if (pi_json_kind(decl) != PI_OBJECT) return "pi_ext.declaration is not a JSON object";
	int v11 = pi_abi_minor() >= 1, v12 = pi_abi_minor() >= 2, dropped = 0, dropped12 = 0, first = 1, handled;
	size_t i = 0, j;
	pi_buf_raw(out, "{", 1);
	while (pi_json_next(decl, &i, &k, &v)) {
		if (pi_json_eq(k, "commands")) return "pi_ext.declaration has \"commands\": declare commands in pi_ext.commands";
		if (!v11 && (pi_json_eq(k, "configSchema") || pi_json_eq(k, "events"))) {
			dropped = 1;
			continue;
		}
		if (!v12 && (pi_json_eq(k, "flags") || pi_json_eq(k, "shortcuts") || pi_json_eq(k, "messageRenderers") || pi_json_eq(k, "channels"))) {
			dropped12 = 1;
			continue;
		}
		if (!first) pi_buf_raw(out, ",", 1);
		first = 0;
		pi_buf_json(out, k);
		pi_buf_raw(out, ":", 1);
		int hooks = pi_json_eq(k, "hooks"), wants = !v12 && pi_json_eq(k, "wants"), events = pi_json_eq(k, "events");
		if (pi_json_eq(k, "tools") && pi_json_kind(v) == PI_ARRAY) {
			pi__declare_tools(out, v, v12, &dropped12);
		} else if (((hooks || events) && pi_json_kind(v) == PI_ARRAY) || (wants && pi_json_kind(v) == PI_OBJECT)) {
			int ef = 1;
			pi_json wk;
			pi_buf_raw(out, wants ? "{" : "[", 1);
			for (j = 0; pi_json_next(v, &j, &wk, &e);) {
				if (hooks && pi__hook11(e, &handled)) {
					if (!v11) { dropped = 1; continue; }
					if (!handled) return "pi_ext.declaration lists a hook (input, before_agent_start or stop) whose function in pi_ext is NULL";
				}
				if (hooks && pi__hook12(e, &handled)) {
					if (!v12) { dropped12 = 1; continue; }
					if (!handled) return "pi_ext.declaration lists an ABI 1.2 hook whose function in pi_ext is NULL (context, before_provider_request, user_bash or session_before)";
				}
				if (events && !v12 && pi__event12(e)) { dropped12 = 1; continue; }
				if (wants && !v11 && (pi_json_eq(wk, "http") || pi_json_eq(wk, "tools"))) { dropped = 1; continue; }
				if (wants && !v12 && (pi_json_eq(wk, "llm") || pi_json_eq(wk, "model"))) { dropped12 = 1; continue; }
				if (!ef) pi_buf_raw(out, ",", 1);
				ef = 0;
				if (wants) {
					pi_buf_json(out, wk);
					pi_buf_raw(out, ":", 1);
				}
				pi_buf_json(out, e);
			}
			pi_buf_raw(out, wants ? "}" : "]", 1);
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
	if (dropped12)
		pi_log(PI_WARN, "this extension uses ABI 1.2 (flags, shortcuts, renderers, channels, 1.2 hooks or events, llm or model wants), but the host speaks ABI 1.%d: those parts stay unused", pi_abi_minor());
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
	} else if (strcmp(method, "tool.execute") == 0 && pi_ext.execute) {
		char *name = pi_json_str(pi_json_get(params, "toolName"));
		char *id = pi_json_str(pi_json_get(params, "toolCallId"));
		char *cwd = pi_json_str(pi_json_get(params, "cwd"));
		pi_tool_ctx ctx = {name ? name : "", id ? id : "", cwd ? cwd : "", 0};
		pi_result r = {{0}, {0}, 0, 0, 0};
		if (pi_ext.execute(&ctx, pi_json_get(params, "input"), &r)) r.is_error = 1;
		pi__result_write(&res, &r, 1);
		pi_result_free(&r);
		free(name), free(id), free(cwd);
		answer = pi__answer(1, &res);
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
	} else if (strcmp(method, "hook.tool_result") == 0 && pi_ext.tool_result) {
		pi_result patch = {{0}, {0}, -1, 0, 0};
		int f = 1;
		pi_ext.tool_result(params, &patch);
		pi_buf_raw(&res, "{", 1);
		if (patch.blocks) {
			pi__key(&res, &f, "content");
			pi_buf_raw(&res, "[", 1);
			pi_buf_raw(&res, patch.content.p, patch.content.n);
			pi_buf_raw(&res, "]", 1);
		}
		if (patch.details.n) {
			pi__key(&res, &f, "details");
			pi_buf_raw(&res, patch.details.p, patch.details.n);
		}
		if (patch.is_error >= 0) pi__member_bool(&res, &f, "isError", patch.is_error);
		pi_buf_raw(&res, "}", 1);
		res.oom |= patch.content.oom | patch.details.oom;
		pi_result_free(&patch);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "hook.bash_spawn") == 0 && pi_ext.bash_spawn) {
		char *cmd = pi_json_str(pi_json_get(params, "command"));
		char *cwd = pi_json_str(pi_json_get(params, "cwd"));
		pi_bash_spawn ch = {{0}, {0}, {0}};
		int f = 1;
		pi_ext.bash_spawn(cmd ? cmd : "", cwd ? cwd : "", pi_json_get(params, "env"), &ch);
		pi_buf_raw(&res, "{", 1);
		pi__text_member(&res, &f, "command", &ch.command);
		pi__text_member(&res, &f, "cwd", &ch.cwd);
		pi_json env = pi_json_parse(ch.env.p, ch.env.n);
		if (ch.env.n && pi_json_kind(env) != PI_OBJECT) {
			pi__buf_reset(&res);
			pi_buf_cstr(&res, "the bash_spawn hook's env is not a JSON object");
			answer = pi__answer(0, &res);
		} else {
			if (ch.env.n) {
				pi__key(&res, &f, "env");
				pi_buf_json(&res, env);
			}
			pi_buf_raw(&res, "}", 1);
			res.oom |= ch.command.oom | ch.cwd.oom | ch.env.oom;
			answer = pi__answer(1, &res);
		}
		pi_buf_free(&ch.command), pi_buf_free(&ch.cwd), pi_buf_free(&ch.env);
		free(cmd), free(cwd);
	} else if (strcmp(method, "event") == 0 && pi_ext.event) {
		char *type = pi_json_str(pi_json_get(params, "type"));
		pi_ext.event(type ? type : "", params);
		free(type);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "component.render") == 0 && pi_ext.component_render) {
		char *id = pi_json_str(pi_json_get(params, "id"));
		pi_json ed = pi_json_get(params, "editor");
		char *text = pi_json_str(pi_json_get(ed, "text"));
		double width = 0, cursor = 0;
		pi_json_num(pi_json_get(params, "width"), &width);
		pi_json_num(pi_json_get(ed, "cursor"), &cursor);
		pi_lines l = {{0}, 0, 0};
		pi_ext.component_render(id ? id : "", (int)width, text, (int)cursor, &l);
		pi_buf_cstr(&res, "{\"lines\":");
		pi__lines_write(&res, &l);
		pi_buf_raw(&res, "}", 1);
		pi_lines_free(&l);
		free(id), free(text);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "component.input") == 0 && pi_ext.component_input) {
		char *id = pi_json_str(pi_json_get(params, "id"));
		char *key = pi_json_str(pi_json_get(params, "key"));
		char *text = pi_json_str(pi_json_get(params, "text"));
		int d = pi_ext.component_input(id ? id : "", key ? key : "", text);
		int f = 1;
		pi_buf_raw(&res, "{", 1);
		if (d & PI_CONSUMED) pi__member_bool(&res, &f, "consumed", 1);
		if (d & PI_CLOSE) pi__member_bool(&res, &f, "close", 1);
		if (d & PI_RERENDER) pi__member_bool(&res, &f, "rerender", 1);
		pi_buf_raw(&res, "}", 1);
		free(id), free(key), free(text);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "component.dispose") == 0 && pi_ext.component_dispose) {
		char *id = pi_json_str(pi_json_get(params, "id"));
		char *why = pi_json_str(pi_json_get(params, "reason"));
		pi_ext.component_dispose(id ? id : "", why ? why : "");
		free(id), free(why);
		answer = pi__answer(1, &res);
	} else if ((strcmp(method, "tool.render") == 0 && pi_ext.tool_render) || (strcmp(method, "message.render") == 0 && pi_ext.message_render)) {
		pi_lines l = {{0}, 0, 0};
		int drawn = method[0] == 't' ? pi_ext.tool_render(params, &l) : pi_ext.message_render(params, &l);
		if (drawn) {
			pi_buf_cstr(&res, "{\"lines\":");
			pi__lines_write(&res, &l);
			pi_buf_raw(&res, "}", 1);
		}
		pi_lines_free(&l);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "shortcut.execute") == 0 && pi_ext.shortcut) {
		char *key = pi_json_str(pi_json_get(params, "key"));
		pi_buf err = {0};
		if (pi_ext.shortcut(key ? key : "", &err)) {
			answer = pi__answer(0, &err);
		} else {
			pi_buf_free(&err);
			answer = pi__answer(1, &res);
		}
		free(key);
	} else if (strcmp(method, "timer.fire") == 0 && pi_ext.timer) {
		char *id = pi_json_str(pi_json_get(params, "id"));
		pi_ext.timer(id ? id : "");
		free(id);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "watch.fire") == 0 && pi_ext.watch) {
		char *id = pi_json_str(pi_json_get(params, "id"));
		pi_ext.watch(id ? id : "", pi_json_get(params, "paths"));
		free(id);
		answer = pi__answer(1, &res);
	} else if (strcmp(method, "bus.message") == 0 && pi_ext.bus) {
		char *ch = pi_json_str(pi_json_get(params, "channel"));
		char *from = pi_json_str(pi_json_get(params, "from"));
		pi_ext.bus(ch ? ch : "", pi_json_get(params, "data"), from ? from : "");
		free(ch), free(from);
		answer = pi__answer(1, &res);
	} else if ((strcmp(method, "hook.context") == 0 && pi_ext.context) ||
	           (strcmp(method, "hook.before_provider_request") == 0 && pi_ext.before_provider_request)) {
		int ctx = method[5] == 'c';
		pi_buf o = {0};
		int changed = ctx ? pi_ext.context(pi_json_get(params, "messages"), &o) : pi_ext.before_provider_request(pi_json_get(params, "payload"), &o);
		pi_json v = pi_json_parse(o.p, o.n);
		if (changed && pi_json_kind(v) != (ctx ? PI_ARRAY : PI_OBJECT)) {
			pi_buf_cstr(&res, ctx ? "the context hook's messages are not a JSON array" : "the before_provider_request hook's payload is not a JSON object");
			answer = pi__answer(0, &res);
		} else {
			if (changed) {
				pi_buf_cstr(&res, ctx ? "{\"messages\":" : "{\"payload\":");
				pi_buf_json(&res, v);
				pi_buf_raw(&res, "}", 1);
			}
			answer = pi__answer(1, &res);
		}
		pi_buf_free(&o);
	} else if (strcmp(method, "hook.user_bash") == 0 && pi_ext.user_bash) {
		char *cmd = pi_json_str(pi_json_get(params, "command"));
		char *cwd = pi_json_str(pi_json_get(params, "cwd"));
		pi_user_bash ub = {{0}, 0};
		int d = pi_ext.user_bash(cmd ? cmd : "", cwd ? cwd : "", &ub);
		if (d == PI_BASH_REPLACE) {
			pi_buf_cstr(&res, "{\"command\":");
			pi_buf_json_strn(&res, ub.text.p ? ub.text.p : "", ub.text.n);
			pi_buf_raw(&res, "}", 1);
		} else if (d == PI_BASH_BLOCK) {
			pi_buf_cstr(&res, "{\"block\":true,\"reason\":");
			pi_buf_json_strn(&res, ub.text.n ? ub.text.p : "blocked", ub.text.n ? ub.text.n : 7);
			pi_buf_raw(&res, "}", 1);
		} else if (d == PI_BASH_RESULT) {
			pi_buf_cstr(&res, "{\"result\":{\"output\":");
			pi_buf_json_strn(&res, ub.text.p ? ub.text.p : "", ub.text.n);
			pi_buf_printf(&res, ",\"exitCode\":%d}}", ub.exit_code);
		}
		res.oom |= ub.text.oom;
		pi_buf_free(&ub.text);
		free(cmd), free(cwd);
		answer = pi__answer(1, &res);
	} else if (strncmp(method, "hook.session_before_", 20) == 0 && pi_ext.session_before) {
		const char *which = method + 20;
		pi_session_before sb = {{0}, {0}};
		int d = pi_ext.session_before(which, params, &sb);
		int summary_ok = strcmp(which, "compact") == 0 || strcmp(which, "tree") == 0;
		if (d == PI_SESSION_CANCEL) {
			int f = 1;
			pi_buf_cstr(&res, "{\"cancel\":true");
			f = 0;
			pi__text_member(&res, &f, "reason", &sb.text);
			pi_buf_raw(&res, "}", 1);
			answer = pi__answer(1, &res);
		} else if (d == PI_SESSION_SUMMARY && !summary_ok) {
			pi_buf_printf(&res, "a session_before_%s hook cannot give a summary", which);
			answer = pi__answer(0, &res);
		} else if (d == PI_SESSION_SUMMARY) {
			pi_json det = pi_json_parse(sb.details.p, sb.details.n);
			pi_buf_cstr(&res, which[0] == 'c' ? "{\"compaction\":{\"summary\":" : "{\"summary\":{\"summary\":");
			pi_buf_json_strn(&res, sb.text.p ? sb.text.p : "", sb.text.n);
			if (sb.details.n && det.p) {
				pi_buf_cstr(&res, ",\"details\":");
				pi_buf_json(&res, det);
			}
			pi_buf_cstr(&res, "}}");
			answer = pi__answer(1, &res);
		} else {
			answer = pi__answer(1, &res);
		}
		pi_buf_free(&sb.text), pi_buf_free(&sb.details);
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
