/*
 * session-name: /session-name [name] names the session, or shows its name
 * (a port of the reference's session-name example to ABI 1.2, in C).
 */
#include "pi.h"

static int session_name(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	if (*args) {
		if (pi_session_set_name(args)) {
			pi_buf_cstr(text, pi_host_error());
			return 1;
		}
		pi_buf_printf(text, "Session named: %s", args);
		return 0;
	}
	pi_session_info_t s = {{0}, {0}, {0}, {0}};
	if (pi_session_info(&s)) {
		pi_buf_cstr(text, pi_host_error());
		pi_session_info_free(&s);
		return 1;
	}
	if (s.name.n) pi_buf_printf(text, "Session: %s", s.name.p);
	else pi_buf_cstr(text, "No session name set");
	pi_session_info_free(&s);
	return 0;
}

static const pi_command commands[] = {
	{"session-name", "Set or show session name (usage: /session-name [new name])", "[name]", session_name},
	{NULL, NULL, NULL, NULL},
};

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"session-name\",\"version\":\"0.1.0\",\"description\":\"Names the session.\",\"tools\":[]}",
	.commands = commands,
};
