/*
 * guest11.c: the C test guest of ABI 1.1 (sdk/langtest). It uses pi.h's
 * helpers only, never JSON written by hand for a host call or an answer.
 * guest11.rs is the same extension in Rust; the tests run both the same
 * way.
 *
 * The tool "probe" takes {"op", ...} and makes one host call with the
 * typed helper of op; its text is the result as JSON, or the helper's
 * error (isError). A string argument X may come as XB64 (base64) instead,
 * so a test can send bytes no JSON string can hold. The tool "request"
 * answers the request a helper would send, for comparing with Go's.
 */
#include "pi.h"

/* arg returns the string argument key of in (or keyB64 decoded), from
 * malloc, with *n its length; NULL when absent. */
static char *arg(pi_json in, const char *key, size_t *n) {
	char k64[64];
	snprintf(k64, sizeof k64, "%sB64", key);
	size_t len = 0;
	char *s = pi_json_str_len(pi_json_get(in, k64), &len);
	if (s) {
		pi_buf b = {0};
		pi_buf_raw(&b, "", 0);
		if (pi_base64_decode(s, len, &b)) { free(s); pi_buf_free(&b); return NULL; }
		free(s);
		if (n) *n = b.n;
		return b.p;
	}
	s = pi_json_str_len(pi_json_get(in, key), &len);
	if (n) *n = len;
	return s;
}

/* json_arg returns the JSON text of in[key] (NULL when absent), or in[keyB64] decoded as text. */
static char *json_arg(pi_json in, const char *key) {
	char k64[64];
	snprintf(k64, sizeof k64, "%sB64", key);
	if (pi_json_kind(pi_json_get(in, k64)) == PI_STRING) return arg(in, key, NULL);
	pi_json v = pi_json_get(in, key);
	if (!v.p) return NULL;
	char *s = malloc(v.n + 1);
	memcpy(s, v.p, v.n);
	s[v.n] = 0;
	return s;
}

static int64_t num(pi_json in, const char *key) {
	double d = 0;
	pi_json_num(pi_json_get(in, key), &d);
	return (int64_t)d;
}

/* headers turns {"K": "V", ...} into K, V, ..., NULL (strings from malloc). */
static char **headers(pi_json h) {
	size_t n = pi_json_len(h), i = 0, k = 0;
	if (!n) return NULL;
	char **out = calloc(2 * n + 1, sizeof *out);
	pi_json key, v;
	while (pi_json_next(h, &i, &key, &v)) {
		out[k++] = pi_json_str(key);
		out[k++] = pi_json_str(v);
	}
	return out;
}

static void free_list(char **l) {
	for (char **p = l; p && *p; p++) free(*p);
	free(l);
}

static int failed(pi_buf *out) {
	pi_buf_cstr(out, pi_host_error());
	return 1;
}

static int probe(pi_json in, pi_buf *out) {
	char *op = pi_json_str(pi_json_get(in, "op"));
	char *key = arg(in, "key", NULL), *scope = arg(in, "scope", NULL), *value = json_arg(in, "value");
	int rc = 0;
	pi_buf b = {0};
	if (!op) {
		pi_buf_cstr(out, "no op");
		rc = 1;
	} else if (!strcmp(op, "kv.get")) {
		if (pi_kv_get(key, scope, &b)) rc = failed(out);
		else pi_buf_cstr(out, b.n ? b.p : "(not set)");
	} else if (!strcmp(op, "kv.set")) {
		rc = pi_kv_set(key, value, scope) ? failed(out) : (pi_buf_cstr(out, "set"), 0);
	} else if (!strcmp(op, "kv.delete")) {
		rc = pi_kv_delete(key, scope) ? failed(out) : (pi_buf_cstr(out, "deleted"), 0);
	} else if (!strcmp(op, "kv.list")) {
		char *prefix = arg(in, "prefix", NULL);
		if (pi_kv_list(prefix, scope, &b)) rc = failed(out);
		else pi_buf_raw(out, b.p, b.n);
		free(prefix);
	} else if (!strcmp(op, "http")) {
		size_t blen = 0;
		char *method = arg(in, "method", NULL), *url = arg(in, "url", NULL), *body = arg(in, "body", &blen);
		char **h = headers(pi_json_get(in, "headers"));
		pi_http_request r = {method, url, (const char *const *)h, body, blen, num(in, "timeoutMs")};
		pi_http_response resp = {0};
		if (pi_http(&r, &resp)) {
			rc = failed(out);
		} else {
			char *multi = pi_http_header(&resp, "X-Multi");
			pi_buf_printf(out, "{\"status\":%d,\"multi\":", resp.status);
			pi_buf_json_str(out, multi ? multi : "");
			pi_buf_cstr(out, ",\"bodyB64\":\"");
			pi_buf_base64(out, resp.body.p, resp.body.n);
			pi_buf_cstr(out, "\"}");
			free(multi);
		}
		pi_http_response_free(&resp);
		free(method), free(url), free(body), free_list(h);
	} else if (!strcmp(op, "tool.call")) {
		char *name = arg(in, "name", NULL), *input = json_arg(in, "input");
		pi_tool_result r = {0};
		if (pi_tool_call(name, input, &r)) {
			rc = failed(out);
		} else {
			pi_buf_printf(out, "{\"isError\":%s,\"text\":", r.is_error ? "true" : "false");
			pi_buf_json_strn(out, r.text.p, r.text.n);
			pi_buf_cstr(out, ",\"result\":");
			pi_buf_raw(out, r.result.p, r.result.n);
			pi_buf_cstr(out, "}");
		}
		pi_tool_result_free(&r);
		free(name), free(input);
	} else if (!strcmp(op, "ui.notify")) {
		char *msg = arg(in, "message", NULL), *level = arg(in, "level", NULL);
		rc = pi_notify(msg, level) ? failed(out) : (pi_buf_cstr(out, "notified"), 0);
		free(msg), free(level);
	} else if (!strcmp(op, "ui.confirm")) {
		char *title = arg(in, "title", NULL), *msg = arg(in, "message", NULL);
		pi_confirm_result c;
		if (pi_confirm(title, msg, num(in, "timeoutMs"), &c)) rc = failed(out);
		else {
			pi_buf_printf(out, "{\"confirmed\":%s,\"reason\":", c.confirmed ? "true" : "false");
			pi_buf_json_str(out, c.reason);
			pi_buf_cstr(out, "}");
		}
		free(title), free(msg);
	} else if (!strcmp(op, "session.append")) {
		char *ct = arg(in, "customType", NULL), *data = json_arg(in, "data");
		if (pi_session_append(ct, data, &b)) rc = failed(out);
		else pi_buf_raw(out, b.p, b.n);
		free(ct), free(data);
	} else if (!strcmp(op, "session.entries")) {
		char *ct = arg(in, "customType", NULL);
		if (pi_session_entries(ct, &b)) rc = failed(out);
		else pi_buf_raw(out, b.p, b.n);
		free(ct);
	} else if (!strcmp(op, "exec")) {
		pi_json a = pi_json_get(in, "argv");
		size_t n = pi_json_len(a);
		char **argv = calloc(n + 1, sizeof *argv);
		for (size_t i = 0; i < n; i++) argv[i] = pi_json_str(pi_json_at(a, i));
		char *cwd = arg(in, "cwd", NULL), *stdin_text = arg(in, "stdin", NULL);
		pi_exec_options o = {cwd, num(in, "timeoutMs"), stdin_text};
		pi_exec_result r = {0};
		if (pi_exec((const char *const *)argv, &o, &r)) rc = failed(out);
		else {
			pi_buf_printf(out, "{\"exitCode\":%d,\"stdout\":", r.exit_code);
			pi_buf_json_strn(out, r.out.p, r.out.n);
			pi_buf_cstr(out, "}");
		}
		pi_exec_result_free(&r);
		free_list(argv), free(cwd), free(stdin_text);
	} else if (!strcmp(op, "raw")) {
		char *method = arg(in, "method", NULL), *params = json_arg(in, "params");
		if (pi_host_call(method, params, &b)) rc = failed(out);
		else pi_buf_raw(out, b.p, b.n);
		free(method), free(params);
	} else if (!strcmp(op, "facts")) {
		pi_buf_printf(out, "{\"abiMinor\":%d,\"trusted\":%s,\"hasUI\":%s,\"mode\":", pi_abi_minor(),
		              pi_trusted() ? "true" : "false", pi_has_ui() ? "true" : "false");
		pi_buf_json_str(out, pi_mode());
		pi_buf_cstr(out, ",\"projectRoot\":");
		pi_buf_json_str(out, pi_project_root());
		pi_buf_cstr(out, "}");
	} else {
		pi_buf_printf(out, "unknown op %s", op);
		rc = 1;
	}
	pi_buf_free(&b);
	free(op), free(key), free(scope), free(value);
	return rc;
}

/* request answers the request text a helper builds for in, as a JSON string. */
static int request(pi_json in, pi_buf *out) {
	char *op = pi_json_str(pi_json_get(in, "op"));
	size_t blen = 0;
	char *a = arg(in, "a", NULL), *b = arg(in, "b", &blen), *c = arg(in, "c", NULL), *j = json_arg(in, "json");
	char **h = headers(pi_json_get(in, "headers"));
	pi_buf req = {0};
	const char *bad = "unknown op";
	if (!op) bad = "no op";
	else if (!strcmp(op, "kv.get")) bad = pi__req_kv_get(&req, a, c);
	else if (!strcmp(op, "kv.set")) bad = pi__req_kv_set(&req, a, j, c);
	else if (!strcmp(op, "kv.delete")) bad = pi__req_kv_delete(&req, a, c);
	else if (!strcmp(op, "kv.list")) bad = pi__req_kv_list(&req, a, c);
	else if (!strcmp(op, "http.request")) {
		pi_http_request r = {c, a, (const char *const *)h, b, blen, num(in, "timeoutMs")};
		bad = pi__req_http(&req, &r);
	} else if (!strcmp(op, "tool.call")) bad = pi__req_tool_call(&req, a, j);
	else if (!strcmp(op, "ui.notify")) bad = pi__req_notify(&req, a, c);
	else if (!strcmp(op, "ui.confirm")) bad = pi__req_confirm(&req, a, b, num(in, "timeoutMs"));
	else if (!strcmp(op, "session.append")) bad = pi__req_session_append(&req, a, j);
	else if (!strcmp(op, "session.entries")) bad = pi__req_session_entries(&req, a);
	else if (!strcmp(op, "exec")) {
		const char *argv[] = {a, b, NULL};
		pi_exec_options o = {c, num(in, "timeoutMs"), NULL};
		bad = pi__req_exec(&req, argv, &o);
	}
	if (!bad) pi_buf_cstr(&req, "}}");
	if (bad) pi_buf_cstr(out, bad);
	else pi_buf_raw(out, req.p, req.n);
	pi_buf_free(&req);
	free(op), free(a), free(b), free(c), free(j), free_list(h);
	return bad != NULL;
}

/* requests answers request for each input of {"batch": [...]}, as a JSON
 * array of the texts (an error as {"error": MESSAGE}). */
static int requests(pi_json batch, pi_buf *out) {
	size_t i = 0;
	pi_json in;
	pi_buf_cstr(out, "[");
	while (pi_json_next(batch, &i, NULL, &in)) {
		pi_buf one = {0};
		int bad = request(in, &one);
		if (out->n > 1) pi_buf_cstr(out, ",");
		if (bad) pi_buf_cstr(out, "{\"error\":");
		pi_buf_json_strn(out, one.p ? one.p : "", one.n);
		if (bad) pi_buf_cstr(out, "}");
		pi_buf_free(&one);
	}
	pi_buf_cstr(out, "]");
	return 0;
}

static int tool(const char *name, pi_json input, pi_buf *out) {
	if (!strcmp(name, "probe")) return probe(input, out);
	if (!strcmp(name, "request")) return request(input, out);
	if (!strcmp(name, "requests")) return requests(pi_json_get(input, "batch"), out);
	pi_buf_printf(out, "unknown tool %s", name);
	return 1;
}

/* tool_call: blocks "write" and asks about "find". */
static int tool_call(const char *tool, pi_json input, pi_buf *reason) {
	(void)input;
	if (!strcmp(tool, "write")) {
		pi_buf_cstr(reason, "guest11 blocks write");
		return PI_BLOCK;
	}
	if (!strcmp(tool, "find")) {
		pi_buf_cstr(reason, "may find run? <\"quoted\">");
		return PI_ASK;
	}
	return PI_ALLOW;
}

static int cmd_echo(const char *args, pi_buf *text, pi_buf *prompt) {
	if (!strcmp(args, "fail")) {
		pi_buf_cstr(text, "echo failed: \"as asked\"");
		return 1;
	}
	pi_buf_printf(text, "echo: %s", args);
	if (!strncmp(args, "ask ", 4)) pi_buf_cstr(prompt, args + 4);
	return 0;
}

static int cmd_kv(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	pi_buf v = {0};
	if (pi_kv_get(args, NULL, &v)) {
		pi_buf_cstr(text, pi_host_error());
		return 1;
	}
	pi_buf_printf(text, "kv %s = %s", args, v.n ? v.p : "(not set)");
	pi_buf_free(&v);
	return 0;
}

static const pi_command commands[] = {
	{"echo", "Echo the arguments", "[text]", cmd_echo},
	{"kv", "Show a kv value", "KEY", cmd_kv},
	{NULL, NULL, NULL, NULL},
};

static int input(const char *text, pi_json images, const char *mode, pi_buf *out) {
	(void)images;
	if (strstr(text, "sk-")) {
		pi_buf_printf(out, "refused in %s mode: the prompt holds a secret", mode);
		return PI_INPUT_HANDLED;
	}
	if (!strncmp(text, "rewrite:", 8)) {
		pi_buf_cstr(out, text + 8);
		return PI_INPUT_REPLACE;
	}
	return PI_INPUT_PASS;
}

static void before_agent_start(const char *prompt, const char *system_prompt, pi_agent_start *change) {
	(void)system_prompt;
	pi_buf_printf(&change->append_system_prompt, "GUEST11 APPEND <&> for: %s", prompt);
	pi_buf_cstr(&change->context, "GUEST11 CONTEXT \"\u2028\"");
}

static int stops;

static int stop(const char *last_text, int turns, pi_buf *message) {
	if (stops++ == 0 && !strcmp(last_text, "first")) {
		pi_buf_printf(message, "GUEST11 CONTINUE after %d turn(s)", turns);
		return 1;
	}
	return 0;
}

/* init leaves checking the config to the configSchema it declares. */
static const char *init(pi_json config) {
	(void)config;
	stops = 0;
	return NULL;
}

const pi_extension pi_ext = {
	.declaration =
		"{\"name\":\"guest11\",\"version\":\"0.1.0\",\"description\":\"ABI 1.1 test guest\","
		"\"tools\":["
		"{\"name\":\"probe\",\"description\":\"One host call.\",\"parameters\":{\"type\":\"object\"}},"
		"{\"name\":\"request\",\"description\":\"A host call's request.\",\"parameters\":{\"type\":\"object\"}},"
		"{\"name\":\"requests\",\"description\":\"Requests of a batch.\",\"parameters\":{\"type\":\"object\"}}],"
		"\"hooks\":[\"tool_call\",\"input\",\"before_agent_start\",\"stop\"],"
		"\"configSchema\":{\"type\":\"object\",\"properties\":{\"greeting\":{\"type\":\"string\"}},\"additionalProperties\":false},"
		"\"wants\":{\"http\":[\"http://127.0.0.1/*\"],\"tools\":[\"read\"]}}",
	.init = init,
	.tool = tool,
	.tool_call = tool_call,
	.commands = commands,
	.input = input,
	.before_agent_start = before_agent_start,
	.stop = stop,
};
