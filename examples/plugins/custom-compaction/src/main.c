/*
 * custom-compaction: compaction by the extension — every message the
 * compaction would drop is summarized in one model call, with a prompt
 * of the extension's (a port of the reference's custom-compaction example
 * to ABI 1.2, in C: the session_before_compact hook and llm.complete
 * under grants.llm). When the call fails, pi's own compaction runs.
 */
#include "pi.h"

static const char *prompt_head =
	"You are a conversation summarizer. Create a comprehensive summary of this conversation that captures:\n"
	"1. The main goals and objectives discussed\n"
	"2. Key decisions made and their rationale\n"
	"3. Important code changes, file modifications, or technical details\n"
	"4. Current state of any ongoing work\n"
	"5. Any blockers, issues, or open questions\n"
	"6. Next steps that were planned or suggested\n\n"
	"Be thorough but concise. The summary will replace the ENTIRE conversation history, so include all "
	"information needed to continue the work effectively.\n\n"
	"Format the summary as structured markdown with clear sections.\n\n";

/* text_of appends the text of a message's content (a string or blocks). */
static void text_of(pi_buf *out, pi_json content) {
	if (pi_json_kind(content) == PI_STRING) {
		size_t n;
		char *s = pi_json_str_len(content, &n);
		if (s) pi_buf_raw(out, s, n);
		free(s);
		return;
	}
	size_t i = 0;
	pi_json b;
	while (pi_json_next(content, &i, NULL, &b)) {
		if (pi_json_eq(pi_json_get(b, "type"), "text")) text_of(out, pi_json_get(b, "text"));
		else if (pi_json_eq(pi_json_get(b, "type"), "toolCall")) {
			char *name = pi_json_str(pi_json_get(b, "name"));
			pi_buf_printf(out, "[tool call %s]", name ? name : "");
			free(name);
		}
	}
}

/* add_messages appends "role: text" for each message of list (entries:
 * session entries, whose messages it takes); it returns how many. */
static size_t add_messages(pi_buf *conv, pi_json list, int entries) {
	size_t i = 0, n = 0;
	pi_json m;
	while (pi_json_next(list, &i, NULL, &m)) {
		if (entries) {
			if (!pi_json_eq(pi_json_get(m, "type"), "message")) continue;
			m = pi_json_get(m, "message");
		}
		char *role = pi_json_str(pi_json_get(m, "role"));
		pi_buf_printf(conv, "%s%s: ", conv->n ? "\n\n" : "", role ? role : "?");
		text_of(conv, pi_json_get(m, "content"));
		free(role);
		n++;
	}
	return n;
}

static int session_before(const char *which, pi_json params, pi_session_before *out) {
	if (strcmp(which, "compact")) return PI_SESSION_PASS;
	pi_buf conv = {0}, prompt = {0}, branch = {0};
	size_t n = add_messages(&conv, pi_json_get(params, "messages"), 0);
	if (!n && !pi_session_branch(0, &branch)) {
		/* Nothing old enough to drop: summarize the whole branch. */
		n = add_messages(&conv, pi_json_parse(branch.p, branch.n), 1);
	}
	pi_buf_free(&branch);
	double tokens = 0;
	pi_json_num(pi_json_get(params, "tokensBefore"), &tokens);
	pi_buf note = {0};
	pi_buf_printf(&note, "Custom compaction: summarizing %d messages (%.0f tokens)...", (int)n, tokens);
	pi_notify(note.p, NULL);
	pi_buf_free(&note);

	pi_buf_cstr(&prompt, prompt_head);
	char *prev = pi_json_str(pi_json_get(params, "previousSummary"));
	if (prev) pi_buf_printf(&prompt, "Previous session summary for context:\n%s\n\n", prev);
	free(prev);
	pi_buf_cstr(&prompt, "<conversation>\n");
	pi_buf_raw(&prompt, conv.p ? conv.p : "", conv.n);
	pi_buf_cstr(&prompt, "\n</conversation>");
	pi_llm_request r = {NULL, prompt.p, NULL, 8192};
	pi_llm_response resp = {{0}, {0}, {0}, 0, 0};
	int rc = pi_llm_complete(&r, &resp), answer = PI_SESSION_PASS;
	if (rc) {
		pi_buf msg = {0};
		pi_buf_printf(&msg, "Compaction failed: %s; using pi's compaction", pi_host_error());
		pi_notify(msg.p, PI_NOTIFY_ERROR);
		pi_buf_free(&msg);
	} else if (!resp.text.n) {
		pi_notify("Compaction summary was empty, using pi's compaction", PI_NOTIFY_WARNING);
	} else {
		pi_buf_raw(&out->text, resp.text.p, resp.text.n);
		pi_buf_printf(&out->details, "{\"messages\":%d,\"by\":\"custom-compaction\"}", (int)n);
		answer = PI_SESSION_SUMMARY;
	}
	pi_llm_response_free(&resp);
	pi_buf_free(&conv);
	pi_buf_free(&prompt);
	return answer;
}

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"custom-compaction\",\"version\":\"0.1.0\",\"description\":\"Compaction that summarizes everything in one call.\","
	               "\"tools\":[],\"hooks\":[\"session_before_compact\"],\"wants\":{\"llm\":true}}",
	.session_before = session_before,
};
