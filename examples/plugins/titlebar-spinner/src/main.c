/*
 * titlebar-spinner: a braille spinner in the terminal's title while the
 * agent works (a port of the reference's titlebar-spinner example to ABI
 * 1.2, in C: ui.setTitle and a repeating timer).
 */
#include "pi.h"

static const char *frames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
static int frame;
static pi_buf timer_id;

/* title writes "[FRAME ]π - [SESSION - ]FOLDER". */
static void title(const char *spin) {
	const char *root = pi_project_root(), *slash = strrchr(root, '/');
	const char *folder = slash && slash[1] ? slash + 1 : root;
	pi_session_info_t s = {{0}, {0}, {0}, {0}};
	pi_session_info(&s); /* no session (tool mode): no name */
	pi_buf t = {0};
	if (spin) pi_buf_printf(&t, "%s ", spin);
	pi_buf_cstr(&t, "π - ");
	if (s.name.n) pi_buf_printf(&t, "%s - ", s.name.p);
	pi_buf_cstr(&t, folder);
	if (pi_ui_set_title(t.p)) pi_log(PI_WARN, "%s", pi_host_error());
	pi_buf_free(&t);
	pi_session_info_free(&s);
}

static void stop(void) {
	if (timer_id.n) pi_timer_clear(timer_id.p);
	pi__buf_reset(&timer_id);
	frame = 0;
	title(NULL);
}

static void timer(const char *id) {
	(void)id;
	title(frames[frame++ % 10]);
}

static void event(const char *type, pi_json ev) {
	(void)ev;
	if (!strcmp(type, "agent_start")) {
		stop();
		title(frames[frame++]);
		if (pi_timer_set(80, 1, &timer_id)) pi_log(PI_WARN, "%s", pi_host_error());
	} else {
		stop(); /* agent_end, session_shutdown */
	}
}

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"titlebar-spinner\",\"version\":\"0.1.0\",\"description\":\"A spinner in the title while the agent works.\","
	               "\"tools\":[],\"hooks\":[\"event\"],\"events\":[\"agent_start\",\"agent_end\",\"session_shutdown\"]}",
	.event = event,
	.timer = timer,
};
