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

/* pi_buf_json_str appends s[0..n) as a quoted JSON string, escaped. */
static void pi_buf_json_strn(pi_buf *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	pi_buf_raw(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': pi_buf_raw(b, "\\\"", 2); break;
		case '\\': pi_buf_raw(b, "\\\\", 2); break;
		case '\n': pi_buf_raw(b, "\\n", 2); break;
		case '\r': pi_buf_raw(b, "\\r", 2); break;
		case '\t': pi_buf_raw(b, "\\t", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				pi_buf_raw(b, u, 6);
			} else {
				pi_buf_raw(b, (const char *)&s[i], 1);
			}
		}
	}
	pi_buf_raw(b, "\"", 1);
}

static void pi_buf_json_str(pi_buf *b, const char *s) { pi_buf_json_strn(b, s, strlen(s)); }

static void pi_buf_free(pi_buf *b) {
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
	b->oom = 0;
}

/* ---- the extension ------------------------------------------------------ */

/* What an extension defines, as the constant pi_ext. Only declaration is
 * required; a NULL function means "not handled". */
typedef struct {
	/* init's result as JSON: {"name", "version", "description"?, "tools":
	 * [ToolSpec], "hooks": ["tool_call", ...], "wants"?}. */
	const char *declaration;
	/* Called by init with [extensions.config] ({} when none). Return NULL,
	 * or an error message: the load fails with it. */
	const char *(*init)(pi_json config);
	/* One tool call: write the result's text to out and return 0, or
	 * return 1 to answer it as an error (isError, out the message). */
	int (*tool)(const char *name, pi_json input, pi_buf *out);
	/* The tool_call hook (declare "tool_call" in hooks): return 0 to let
	 * the call through, 1 to block it with the reason written to reason. */
	int (*tool_call)(const char *tool, pi_json input, pi_buf *reason);
	/* Any other method (hook.tool_result, hook.bash_spawn, event): write
	 * the result as JSON to result and return 0 (nothing written means
	 * {}), or write an error message and return 1. */
	int (*other)(const char *method, pi_json params, pi_buf *result);
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

PI_EXPORT("pi_call") int64_t pi_call(const char *ptr, int32_t len) {
	pi_json req = pi_json_parse(ptr, (size_t)len);
	if (pi_json_kind(req) != PI_OBJECT) return pi__error("malformed request: not a JSON object");
	pi_json params = pi_json_get(req, "params");
	char *method = pi_json_str(pi_json_get(req, "method"));
	if (!method) return pi__error("malformed request: no method");
	pi_buf res = {0};
	int64_t answer;
	if (strcmp(method, "init") == 0) {
		const char *err = pi_ext.init ? pi_ext.init(pi_json_get(params, "config")) : NULL;
		if (err) {
			answer = pi__error(err);
		} else {
			pi_buf_cstr(&res, pi_ext.declaration);
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
		if (pi_ext.tool_call(tool ? tool : "", pi_json_get(params, "input"), &reason)) {
			pi_buf_cstr(&res, "{\"block\":true,\"reason\":");
			pi_buf_json_strn(&res, reason.n ? reason.p : "blocked", reason.n ? reason.n : 7);
			pi_buf_cstr(&res, "}");
		}
		pi_buf_free(&reason);
		free(tool);
		answer = pi__answer(1, &res);
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
