/*
 * send-user-message: /ask, /steer, /followup and /askwith send the
 * agent a user message, as if the person typed it (a port of the
 * reference's send-user-message example to ABI 1.2, in C).
 */
#include "pi.h"

static int idle(void) {
	pi_agent_state_t s = {0, 0, {0}};
	int rc = pi_agent_state(&s);
	pi_buf_free(&s.system_prompt);
	return !rc && s.idle;
}

static int usage(const char *cmd, const char *args, pi_buf *text) {
	if (*args) return 0;
	pi_buf_printf(text, "Usage: /%s <message>", cmd);
	return 1;
}

static int sent(int rc, pi_buf *text, const char *ok) {
	if (rc) {
		pi_buf_cstr(text, pi_host_error());
		return 1;
	}
	if (ok) pi_buf_cstr(text, ok);
	return 0;
}

static int ask(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	if (usage("ask", args, text)) return 0;
	if (!idle()) {
		pi_buf_cstr(text, "Agent is busy. Use /steer or /followup instead.");
		return 0;
	}
	return sent(pi_agent_send_user_message(args, NULL), text, NULL);
}

static int steer(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	if (usage("steer", args, text)) return 0;
	return sent(pi_agent_send_user_message(args, idle() ? NULL : PI_STEER), text, NULL);
}

static int followup(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	if (usage("followup", args, text)) return 0;
	if (idle()) return sent(pi_agent_send_user_message(args, NULL), text, NULL);
	return sent(pi_agent_send_user_message(args, PI_FOLLOW_UP), text, "Follow-up queued");
}

static int askwith(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	if (usage("askwith", args, text)) return 0;
	pi_result blocks = {{0}, {0}, 0, 0, 0};
	pi_result_textf(&blocks, "User request: %s", args);
	pi_result_text(&blocks, "Please respond concisely.");
	int rc = pi_agent_send_user_blocks(&blocks, NULL);
	pi_result_free(&blocks);
	return sent(rc, text, NULL);
}

static const pi_command commands[] = {
	{"ask", "Send a user message to the agent", "<message>", ask},
	{"steer", "Send a steering message (interrupts current processing)", "<message>", steer},
	{"followup", "Queue a follow-up message (waits for current processing)", "<message>", followup},
	{"askwith", "Send a user message with structured content", "<message>", askwith},
	{NULL, NULL, NULL, NULL},
};

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"send-user-message\",\"version\":\"0.1.0\",\"description\":\"Commands that send the agent a message.\",\"tools\":[]}",
	.commands = commands,
};
