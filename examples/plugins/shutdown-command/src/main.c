/*
 * shutdown-command: /quit ends pi cleanly, as the end of input does (a
 * port of the reference's shutdown-command example to ABI 1.2, in C).
 * The reference's tools that shut pi down are not ported: pi.shutdown is
 * allowed only in a command or a shortcut, so a model cannot end pi.
 */
#include "pi.h"

static int quit(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)args, (void)prompt;
	if (pi_shutdown()) {
		pi_buf_cstr(text, pi_host_error());
		return 1;
	}
	pi_buf_cstr(text, "Goodbye.");
	return 0;
}

static const pi_command commands[] = {
	{"quit-now", "Exit pi cleanly", NULL, quit},
	{NULL, NULL, NULL, NULL},
};

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"shutdown-command\",\"version\":\"0.1.0\",\"description\":\"/quit-now ends pi.\",\"tools\":[]}",
	.commands = commands,
};
