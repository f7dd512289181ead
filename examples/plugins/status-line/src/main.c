/*
 * status-line: the turn's progress on pi's status line (a port of the
 * reference's status-line example to ABI 1.2, in C).
 *
 * "Ready" at the start of a session, "● Turn N..." while the model works
 * on turn N, "✓ Turn N complete" after it; a new session counts from 0
 * again. The status is styled spans, drawn in pi's theme.
 */
#include "pi.h"

static int turns;

static void status(const char *mark, const char *mark_style, const char *text) {
	pi_lines l = {{0}, 0, 0};
	if (mark) pi_lines_span(&l, mark, mark_style);
	pi_lines_span(&l, text, "dim");
	if (pi_ui_set_status_line("status-demo", &l)) pi_log(PI_WARN, "status: %s", pi_host_error());
	pi_lines_free(&l);
}

static void event(const char *type, pi_json ev) {
	char text[64];
	if (!strcmp(type, "session_start")) {
		status(NULL, NULL, "Ready");
	} else if (!strcmp(type, "session_switch")) {
		if (pi_json_eq(pi_json_get(ev, "reason"), "new")) {
			turns = 0;
			status(NULL, NULL, "Ready");
		}
	} else if (!strcmp(type, "turn_start")) {
		snprintf(text, sizeof text, " Turn %d...", ++turns);
		status("●", "accent", text);
	} else if (!strcmp(type, "turn_end")) {
		snprintf(text, sizeof text, " Turn %d complete", turns);
		status("✓", "success", text);
	}
}

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"status-line\",\"version\":\"0.1.0\","
	               "\"description\":\"The turn's progress on the status line.\",\"tools\":[],"
	               "\"hooks\":[\"event\"],\"events\":[\"session_start\",\"session_switch\",\"turn_start\",\"turn_end\"]}",
	.event = event,
};
