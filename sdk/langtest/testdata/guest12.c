/*
 * guest12.c: the C test guest of whole tool results, the typed 1.0 hooks
 * and ABI 1.2 (sdk/langtest), written with pi.h's helpers only.
 * rust12/lib.rs is the same extension in Rust; the tests run both the
 * same way.
 *
 * Tools: "whole" answers a whole result (text, an image, details,
 * isError, terminate) after emitting "progress" partial results; "call12"
 * makes one ABI 1.2 host call with the typed helper named by "op" and
 * answers its result as JSON text (or the helper's error, isError).
 * Hooks: tool_result appends " [guest12 saw TOOL]" to every result of
 * "read"; bash_spawn prefixes commands with "GUEST12=1 "; event counts
 * events. A /c12 OP JSON command runs call12 (for command-only methods).
 * The 1.2 callbacks answer in ways a test can see: components draw their
 * id and the keys they got, timers, watches and bus messages are written
 * to the session with session.append, shortcuts notify.
 */
#include "pi.h"

static int events;

static char *str(pi_json in, const char *key) { return pi_json_str(pi_json_get(in, key)); }

static int64_t num(pi_json in, const char *key) {
	double d = 0;
	pi_json_num(pi_json_get(in, key), &d);
	return (int64_t)d;
}

/* json copies the JSON text of in[key] (NULL when absent). */
static char *json(pi_json in, const char *key) {
	pi_json v = pi_json_get(in, key);
	if (!v.p) return NULL;
	char *s = malloc(v.n + 1);
	memcpy(s, v.p, v.n);
	s[v.n] = 0;
	return s;
}

/* strs turns a JSON array of strings into a NULL-ended list (from malloc). */
static char **strs(pi_json a) {
	size_t n = pi_json_len(a);
	char **out = calloc(n + 1, sizeof *out);
	for (size_t i = 0; i < n; i++) out[i] = pi_json_str(pi_json_at(a, i));
	return out;
}

static void free_strs(char **l) {
	for (char **p = l; p && *p; p++) free(*p);
	free(l);
}

/* lines turns a JSON array of strings into lines; a string starting with
 * "*" becomes a line of two spans, the second styled "accent bold". */
static void lines(pi_json a, pi_lines *l) {
	size_t i = 0;
	pi_json e;
	while (pi_json_next(a, &i, NULL, &e)) {
		char *s = pi_json_str(e);
		if (s && s[0] == '*') {
			pi_lines_span(l, "* ", NULL);
			pi_lines_span(l, s + 1, "accent bold");
			pi_lines_end(l);
		} else {
			pi_lines_text(l, s ? s : "");
		}
		free(s);
	}
}

static int whole(pi_tool_ctx *ctx, pi_json in, pi_result *out) {
	int64_t steps = num(in, "progress");
	for (int64_t i = 1; i <= steps; i++) {
		pi_result p = {{0}, {0}, 0, 0, 0};
		char d[64];
		pi_result_textf(&p, "step %d of %d", (int)i, (int)steps);
		snprintf(d, sizeof d, "{\"step\":%d}", (int)i);
		pi_result_details(&p, d);
		int cancelled = pi_emit(ctx, &p);
		pi_result_free(&p);
		if (cancelled) break;
	}
	char *text = str(in, "text"), *img = str(in, "image"), *mime = str(in, "mime"), *details = json(in, "details");
	pi_result_text(out, text ? text : "");
	if (img) pi_result_image(out, img, strlen(img), mime ? mime : "image/png");
	pi_result_textf(out, "call %s in %s", ctx->tool_call_id, ctx->cwd);
	if (details && pi_result_details(out, details)) pi_result_text(out, "bad details");
	out->terminate = pi_json_true(pi_json_get(in, "terminate"));
	free(text), free(img), free(mime), free(details);
	return pi_json_true(pi_json_get(in, "error"));
}

static void dialog_json(pi_buf *out, pi_dialog *d) {
	pi_buf_cstr(out, "{\"value\":");
	if (d->has_value) pi_buf_json_strn(out, d->value.p, d->value.n);
	else pi_buf_cstr(out, "null");
	pi_buf_cstr(out, ",\"reason\":");
	pi_buf_json_str(out, d->reason);
	pi_buf_cstr(out, "}");
}

static int failed(pi_result *out) {
	pi_result_text(out, pi_host_error());
	return 1;
}

/* call12 makes the host call op with the typed helper and writes its
 * result as JSON text to t. */
static int call12(const char *op, pi_json in, pi_buf *t) {
	char *a = str(in, "a"), *b = str(in, "b"), *j = json(in, "json");
	int64_t n = num(in, "n");
	int rc = 0;
	pi_buf buf = {0};
	if (!strcmp(op, "ui.select")) {
		char **opts = strs(pi_json_get(in, "options"));
		pi_dialog d = {0};
		if (!(rc = pi_ui_select(a, (const char *const *)opts, n, &d))) dialog_json(t, &d);
		pi_dialog_free(&d);
		free_strs(opts);
	} else if (!strcmp(op, "ui.input") || !strcmp(op, "ui.editor")) {
		pi_dialog d = {0};
		rc = op[3] == 'i' ? pi_ui_input(a, b, n, &d) : pi_ui_editor(a, b, n, &d);
		if (!rc) dialog_json(t, &d);
		pi_dialog_free(&d);
	} else if (!strcmp(op, "ui.setStatus")) {
		pi_lines l = {{0}, 0, 0};
		if (pi_json_get(in, "spans").p) {
			lines(pi_json_get(in, "spans"), &l);
			rc = pi_ui_set_status_line(a, &l);
		} else {
			rc = pi_ui_set_status(a, b);
		}
		pi_lines_free(&l);
	} else if (!strcmp(op, "ui.setWidget")) {
		pi_lines l = {{0}, 0, 0};
		pi_json ls = pi_json_get(in, "lines");
		lines(ls, &l);
		rc = pi_ui_set_widget(a, pi_json_kind(ls) == PI_ARRAY ? &l : NULL, b);
		pi_lines_free(&l);
	} else if (!strcmp(op, "ui.setTitle")) {
		rc = pi_ui_set_title(a);
	} else if (!strcmp(op, "ui.setWorkingMessage")) {
		rc = pi_ui_set_working_message(a);
	} else if (!strcmp(op, "ui.setEditorText")) {
		rc = pi_ui_set_editor_text(a);
	} else if (!strcmp(op, "ui.getEditorText")) {
		if (!(rc = pi_ui_get_editor_text(&buf))) pi_buf_json_strn(t, buf.p, buf.n);
	} else if (!strcmp(op, "ui.component")) {
		char *slot = str(in, "slot"), *key = str(in, "key"), *pl = str(in, "placement");
		pi_component_opts o = {slot, key, pl, (int)n};
		if (!(rc = pi_ui_component(&o, &buf))) {
			pi_buf_cstr(t, "{\"id\":");
			pi_buf_json_strn(t, buf.p, buf.n);
			pi_buf_cstr(t, "}");
		}
		free(slot), free(key), free(pl);
	} else if (!strcmp(op, "ui.rerender")) {
		rc = pi_ui_rerender(a);
	} else if (!strcmp(op, "ui.close")) {
		rc = pi_ui_close(a);
	} else if (!strcmp(op, "session.info")) {
		pi_session_info_t s = {{0}, {0}, {0}, {0}};
		if (!(rc = pi_session_info(&s))) {
			pi_buf_cstr(t, "{\"sessionId\":");
			pi_buf_json_strn(t, s.session_id.p, s.session_id.n);
			pi_buf_cstr(t, ",\"sessionFile\":");
			pi_buf_json_strn(t, s.session_file.p, s.session_file.n);
			pi_buf_cstr(t, ",\"name\":");
			pi_buf_json_strn(t, s.name.p, s.name.n);
			pi_buf_cstr(t, ",\"leafId\":");
			pi_buf_json_strn(t, s.leaf_id.p, s.leaf_id.n);
			pi_buf_cstr(t, "}");
		}
		pi_session_info_free(&s);
	} else if (!strcmp(op, "session.branch") || !strcmp(op, "session.tree")) {
		rc = op[8] == 'b' ? pi_session_branch((int)n, &buf) : pi_session_tree(&buf);
		if (!rc) pi_buf_raw(t, buf.p, buf.n);
	} else if (!strcmp(op, "session.setName")) {
		rc = pi_session_set_name(a);
	} else if (!strcmp(op, "session.setLabel")) {
		rc = pi_session_set_label(a, b);
	} else if (!strcmp(op, "session.contextUsage")) {
		pi_context_usage u;
		if (!(rc = pi_session_context_usage(&u))) pi_buf_printf(t, "{\"tokens\":%lld,\"contextWindow\":%lld,\"percent\":%g}", (long long)u.tokens, (long long)u.context_window, u.percent);
	} else if (!strcmp(op, "session.compact")) {
		rc = pi_session_compact(a);
	} else if (!strcmp(op, "session.new") || !strcmp(op, "session.switch") || !strcmp(op, "session.fork") || !strcmp(op, "session.navigate")) {
		int c = 0;
		if (!strcmp(op, "session.new")) rc = pi_session_new(&c);
		else if (!strcmp(op, "session.switch")) rc = pi_session_switch(a, &c);
		else if (!strcmp(op, "session.fork")) rc = pi_session_fork(a, &c);
		else rc = pi_session_navigate(a, (int)n, &c);
		if (!rc) pi_buf_printf(t, "{\"cancelled\":%s}", c ? "true" : "false");
	} else if (!strcmp(op, "agent.sendUserMessage")) {
		rc = pi_agent_send_user_message(a, b);
	} else if (!strcmp(op, "agent.sendMessage")) {
		char *ct = str(in, "customType"), *details = json(in, "details"), *as = str(in, "deliverAs");
		pi_message m = {ct, a, NULL, pi_json_true(pi_json_get(in, "display")), details, pi_json_true(pi_json_get(in, "triggerTurn")), as};
		rc = pi_agent_send_message(&m);
		free(ct), free(details), free(as);
	} else if (!strcmp(op, "agent.abort")) {
		rc = pi_agent_abort();
	} else if (!strcmp(op, "agent.state")) {
		pi_agent_state_t s = {0, 0, {0}};
		if (!(rc = pi_agent_state(&s))) {
			pi_buf_printf(t, "{\"idle\":%s,\"pendingMessages\":%lld,\"systemPrompt\":", s.idle ? "true" : "false", (long long)s.pending_messages);
			pi_buf_json_strn(t, s.system_prompt.p, s.system_prompt.n);
			pi_buf_cstr(t, "}");
		}
		pi_buf_free(&s.system_prompt);
	} else if (!strcmp(op, "tools.list")) {
		if (!(rc = pi_tools_list(&buf))) pi_buf_raw(t, buf.p, buf.n);
	} else if (!strcmp(op, "tools.setActive") || !strcmp(op, "tools.unregister")) {
		char **names = strs(pi_json_get(in, "names"));
		rc = op[6] == 's' ? pi_tools_set_active((const char *const *)names) : pi_tools_unregister((const char *const *)names);
		free_strs(names);
	} else if (!strcmp(op, "tools.register")) {
		rc = pi_tools_register(j);
	} else if (!strcmp(op, "model.get")) {
		pi_model_info m = {{0}, {0}, 0, {0}};
		if (!(rc = pi_model_get(&m))) {
			pi_buf_cstr(t, "{\"provider\":");
			pi_buf_json_strn(t, m.provider.p, m.provider.n);
			pi_buf_cstr(t, ",\"id\":");
			pi_buf_json_strn(t, m.id.p, m.id.n);
			pi_buf_printf(t, ",\"contextWindow\":%lld,\"thinkingLevel\":", (long long)m.context_window);
			pi_buf_json_str(t, m.thinking_level);
			pi_buf_cstr(t, "}");
		}
		pi_model_info_free(&m);
	} else if (!strcmp(op, "model.list")) {
		if (!(rc = pi_model_list(&buf))) pi_buf_raw(t, buf.p, buf.n);
	} else if (!strcmp(op, "model.set")) {
		rc = pi_model_set(a, b);
	} else if (!strcmp(op, "model.setThinkingLevel")) {
		char applied[16];
		if (!(rc = pi_model_set_thinking_level(a, applied))) pi_buf_json_str(t, applied);
	} else if (!strcmp(op, "llm.complete")) {
		pi_llm_request r = {a, b, j, n};
		pi_llm_response resp = {{0}, {0}, {0}, 0, 0};
		if (!(rc = pi_llm_complete(&r, &resp))) {
			pi_buf_cstr(t, "{\"text\":");
			pi_buf_json_strn(t, resp.text.p, resp.text.n);
			pi_buf_cstr(t, ",\"stopReason\":");
			pi_buf_json_str(t, resp.stop_reason);
			pi_buf_printf(t, ",\"input\":%lld,\"output\":%lld}", (long long)resp.input_tokens, (long long)resp.output_tokens);
		}
		pi_llm_response_free(&resp);
	} else if (!strcmp(op, "flags.get")) {
		if (!(rc = pi_flags_get(&buf))) pi_buf_raw(t, buf.p, buf.n);
	} else if (!strcmp(op, "timer.set")) {
		if (!(rc = pi_timer_set(n, pi_json_true(pi_json_get(in, "repeat")), &buf))) pi_buf_json_strn(t, buf.p, buf.n);
	} else if (!strcmp(op, "timer.clear")) {
		rc = pi_timer_clear(a);
	} else if (!strcmp(op, "watch.add")) {
		if (!(rc = pi_watch_add(a, (int)n, &buf))) pi_buf_json_strn(t, buf.p, buf.n);
	} else if (!strcmp(op, "watch.remove")) {
		rc = pi_watch_remove(a);
	} else if (!strcmp(op, "bus.emit")) {
		rc = pi_bus_emit(a, j);
	} else if (!strcmp(op, "pi.shutdown")) {
		rc = pi_shutdown();
	} else if (!strcmp(op, "pi.reload")) {
		rc = pi_reload();
	} else {
		pi_buf_printf(t, "unknown op %s", op);
		free(a), free(b), free(j);
		return 1;
	}
	if (rc) {
		pi__buf_reset(t);
		pi_buf_cstr(t, pi_host_error());
	} else if (!t->n) {
		pi_buf_cstr(t, "{}");
	}
	pi_buf_free(&buf);
	free(a), free(b), free(j);
	return rc;
}

static int execute(pi_tool_ctx *ctx, pi_json in, pi_result *out) {
	if (!strcmp(ctx->tool_name, "whole")) return whole(ctx, in, out);
	if (!strcmp(ctx->tool_name, "call12")) {
		char *op = str(in, "op");
		pi_buf t = {0};
		int rc = call12(op ? op : "", in, &t);
		pi_result_textn(out, t.p ? t.p : "", t.n);
		pi_buf_free(&t);
		free(op);
		return rc;
	}
	if (!strcmp(ctx->tool_name, "events")) {
		pi_result_textf(out, "%d", events);
		return 0;
	}
	pi_result_textf(out, "unknown tool %s", ctx->tool_name);
	return failed(out);
}

static void tool_result(pi_json params, pi_result *patch) {
	char *tool = str(params, "toolName");
	if (tool && !strcmp(tool, "read")) {
		pi_json c = pi_json_get(params, "content");
		pi_buf all = {0};
		pi_buf_json(&all, c);
		pi_result_blocks(patch, all.p);
		pi_result_text(patch, "[guest12 saw read]");
		pi_result_details(patch, "{\"guest12\":true}");
		patch->is_error = 0;
		pi_buf_free(&all);
	}
	free(tool);
}

static void bash_spawn(const char *command, const char *cwd, pi_json env, pi_bash_spawn *change) {
	(void)cwd, (void)env;
	pi_buf_printf(&change->command, "GUEST12=1 %s", command);
	pi_buf_cstr(&change->env, "{\"GUEST12_ENV\":\"yes\"}");
}

static void event(const char *type, pi_json ev) {
	(void)type, (void)ev;
	events++;
}

static int cmd_c12(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	const char *sp = strchr(args, ' ');
	size_t n = sp ? (size_t)(sp - args) : strlen(args);
	char op[64];
	snprintf(op, sizeof op, "%.*s", (int)(n < 63 ? n : 63), args);
	const char *j = sp ? sp + 1 : "{}";
	pi_json in = pi_json_parse(j, strlen(j));
	return call12(op, in, text);
}

static const pi_command commands[] = {
	{"c12", "Run one ABI 1.2 host call", "OP JSON", cmd_c12},
	{NULL, NULL, NULL, NULL},
};

/* The 1.2 callbacks. */

static pi_buf keys;

static void component_render(const char *id, int width, const char *editor_text, int cursor, pi_lines *out) {
	pi_lines_printf(out, "component %s width %d", id, width);
	pi_lines_span(out, "keys: ", "muted");
	pi_lines_span(out, keys.p ? keys.p : "", "accent");
	pi_lines_end(out);
	if (editor_text) pi_lines_printf(out, "editor %s cursor %d", editor_text, cursor);
}

static int component_input(const char *id, const char *key, const char *text) {
	(void)id;
	if (!strcmp(key, "q")) return PI_CONSUMED | PI_CLOSE;
	if (!strcmp(key, "enter")) return 0; /* to pi's editor */
	pi_buf_printf(&keys, "%s%s", key, text ? text : "");
	return PI_CONSUMED | PI_RERENDER;
}

static void record(const char *what, const char *id, const char *more) {
	pi_buf d = {0};
	pi_buf_cstr(&d, "{\"what\":");
	pi_buf_json_str(&d, what);
	pi_buf_cstr(&d, ",\"id\":");
	pi_buf_json_str(&d, id);
	if (more) {
		pi_buf_cstr(&d, ",\"more\":");
		pi_buf_cstr(&d, more);
	}
	pi_buf_cstr(&d, "}");
	if (pi_session_append("guest12", d.p, NULL)) pi_log(PI_WARN, "record %s: %s", what, pi_host_error());
	pi_buf_free(&d);
}

static void component_dispose(const char *id, const char *reason) {
	pi_buf r = {0};
	pi_buf_json_str(&r, reason);
	record("dispose", id, r.p);
	pi_buf_free(&r);
}

static int tool_render(pi_json params, pi_lines *out) {
	char *name = str(params, "toolName");
	pi_lines_printf(out, "guest12 draws %s partial=%s", name ? name : "", pi_json_true(pi_json_get(params, "isPartial")) ? "yes" : "no");
	free(name);
	return 1;
}

static int message_render(pi_json params, pi_lines *out) {
	char *ct = str(params, "customType");
	pi_lines_span(out, "guest12 message ", "bold");
	pi_lines_span(out, ct ? ct : "", "success");
	pi_lines_end(out);
	free(ct);
	return 1;
}

static int shortcut(const char *key, pi_buf *err) {
	if (pi_notify(key, NULL)) {
		pi_buf_cstr(err, pi_host_error());
		return 1;
	}
	return 0;
}

static void timer(const char *id) { record("timer", id, NULL); }

static void watch(const char *id, pi_json paths) {
	pi_buf p = {0};
	pi_buf_json(&p, paths);
	record("watch", id, p.p);
	pi_buf_free(&p);
}

static void bus(const char *channel, pi_json data, const char *from) {
	pi_buf m = {0};
	pi_buf_cstr(&m, "{\"data\":");
	pi_buf_json(&m, data);
	pi_buf_cstr(&m, ",\"from\":");
	pi_buf_json_str(&m, from);
	pi_buf_cstr(&m, "}");
	record("bus", channel, m.p);
	pi_buf_free(&m);
}

static int context(pi_json messages, pi_buf *out) {
	/* Adds a user message at the end of what the model gets. */
	size_t i = 0;
	pi_json e;
	pi_buf_cstr(out, "[");
	while (pi_json_next(messages, &i, NULL, &e)) {
		if (out->n > 1) pi_buf_cstr(out, ",");
		pi_buf_json(out, e);
	}
	if (out->n > 1) pi_buf_cstr(out, ",");
	pi_buf_cstr(out, "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"GUEST12 CONTEXT\"}]}]");
	return 1;
}

static int user_bash(const char *command, const char *cwd, pi_user_bash *out) {
	(void)cwd;
	if (!strncmp(command, "blocked", 7)) {
		pi_buf_cstr(&out->text, "guest12 blocks this");
		return PI_BASH_BLOCK;
	}
	if (!strncmp(command, "fake", 4)) {
		pi_buf_cstr(&out->text, "fake output\n");
		out->exit_code = 3;
		return PI_BASH_RESULT;
	}
	if (!strncmp(command, "swap ", 5)) {
		pi_buf_cstr(&out->text, command + 5);
		return PI_BASH_REPLACE;
	}
	return PI_BASH_PASS;
}

static int session_before(const char *which, pi_json params, pi_session_before *out) {
	(void)params;
	if (!strcmp(which, "compact")) {
		pi_buf_cstr(&out->text, "GUEST12 SUMMARY");
		pi_buf_cstr(&out->details, "{\"by\":\"guest12\"}");
		return PI_SESSION_SUMMARY;
	}
	if (!strcmp(which, "fork")) {
		pi_buf_cstr(&out->text, "guest12 keeps this session");
		return PI_SESSION_CANCEL;
	}
	return PI_SESSION_PASS;
}

/* G12_PLAIN (-DG12_PLAIN) declares the tools and 1.0 hooks only: for a
 * host with part of 1.2. */
#ifdef G12_PLAIN
#define G12_DECL12 "\"hooks\":[\"tool_result\",\"bash_spawn\",\"event\"]}"
#define G12_RENDER ""
#else
#define G12_DECL12 \
	"\"hooks\":[\"tool_result\",\"bash_spawn\",\"event\",\"context\",\"user_bash\",\"session_before_compact\",\"session_before_fork\"]," \
	"\"flags\":[{\"name\":\"g12-mode\",\"description\":\"A string flag.\",\"type\":\"string\",\"default\":\"calm\"}," \
	"{\"name\":\"g12-loud\",\"description\":\"A boolean flag.\",\"type\":\"boolean\"}]," \
	"\"shortcuts\":[{\"key\":\"ctrl+g\",\"description\":\"Notify.\"}]," \
	"\"messageRenderers\":[\"guest12\"]," \
	"\"channels\":[\"guest12:news\"]," \
	"\"wants\":{\"llm\":true,\"model\":true}}"
#define G12_RENDER ",\"render\":true"
#endif

const pi_extension pi_ext = {
	.declaration =
		"{\"name\":\"guest12\",\"version\":\"0.1.0\",\"description\":\"ABI 1.2 test guest\","
		"\"tools\":["
		"{\"name\":\"whole\",\"description\":\"A whole result.\",\"parameters\":{\"type\":\"object\"}" G12_RENDER "},"
		"{\"name\":\"call12\",\"description\":\"One 1.2 host call.\",\"parameters\":{\"type\":\"object\"}},"
		"{\"name\":\"events\",\"description\":\"Events seen.\",\"parameters\":{\"type\":\"object\"}}],"
		G12_DECL12,
	.execute = execute,
	.tool_result = tool_result,
	.bash_spawn = bash_spawn,
	.event = event,
	.commands = commands,
	.component_render = component_render,
	.component_input = component_input,
	.component_dispose = component_dispose,
	.tool_render = tool_render,
	.message_render = message_render,
	.shortcut = shortcut,
	.timer = timer,
	.watch = watch,
	.bus = bus,
	.context = context,
	.user_bash = user_bash,
	.session_before = session_before,
};
