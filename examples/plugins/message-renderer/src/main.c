/*
 * message-renderer: /status [warn|error] MESSAGE adds a status-update
 * message to the conversation, drawn by the extension (a port of the
 * reference's message-renderer example to ABI 1.2, in C:
 * pi_agent_send_message and a message renderer).
 */
#include "pi.h"
#include <time.h>

static int status(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	const char *level = "info", *content = args;
	if (!strncmp(args, "warn", 4) && (args[4] == ' ' || !args[4])) level = "warn", content = args + 4;
	else if (!strncmp(args, "error", 5) && (args[5] == ' ' || !args[5])) level = "error", content = args + 5;
	while (*content == ' ') content++;
	if (!*content) content = "Status update";
	char details[96];
	snprintf(details, sizeof details, "{\"level\":\"%s\",\"timestamp\":%lld}", level, (long long)time(NULL) * 1000);
	pi_message m = {"status-update", content, NULL, 1, details, 0, NULL};
	if (pi_agent_send_message(&m)) {
		pi_buf_cstr(text, pi_host_error());
		return 1;
	}
	return 0;
}

/* The renderer: "[LEVEL] content" in the level's colour; expanded, the
 * time too. */
static int render(pi_json params, pi_lines *out) {
	pi_json details = pi_json_get(params, "details");
	char *level = pi_json_str(pi_json_get(details, "level"));
	const char *lv = level ? level : "info";
	const char *style = !strcmp(lv, "error") ? "error" : !strcmp(lv, "warn") ? "warning" : "success";
	char prefix[32];
	snprintf(prefix, sizeof prefix, "[%s]", !strcmp(lv, "error") ? "ERROR" : !strcmp(lv, "warn") ? "WARN" : "INFO");
	char *content = pi_json_str(pi_json_get(params, "content"));
	pi_lines_span(out, prefix, style);
	pi_lines_span(out, " ", NULL);
	pi_lines_span(out, content ? content : "", NULL);
	pi_lines_end(out);
	double ts = 0;
	if (pi_json_true(pi_json_get(params, "expanded")) && pi_json_num(pi_json_get(details, "timestamp"), &ts)) {
		time_t secs = (time_t)(ts / 1000);
		struct tm tm;
		gmtime_r(&secs, &tm);
		char at[32];
		strftime(at, sizeof at, "  at %H:%M:%S UTC", &tm);
		pi_lines_span(out, at, "dim");
		pi_lines_end(out);
	}
	free(level), free(content);
	return 1;
}

static const pi_command commands[] = {
	{"status", "Send a status message (usage: /status [warn|error] message)", "[warn|error] message", status},
	{NULL, NULL, NULL, NULL},
};

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"message-renderer\",\"version\":\"0.1.0\",\"description\":\"Status messages drawn by the extension.\","
	               "\"tools\":[],\"messageRenderers\":[\"status-update\"]}",
	.commands = commands,
	.message_render = render,
};
