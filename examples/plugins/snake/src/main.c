/*
 * snake: /snake plays Snake in an overlay over pi's editor (a port of the
 * reference's snake example to ABI 1.2, in C: an overlay component, a
 * repeating timer, and the high score kept in the session).
 *
 * Arrow keys or WASD steer, p pauses, q or Esc ends the game (Ctrl+C
 * always closes it, as every overlay). The board is drawn with styled
 * spans; pi removes anything that is not text.
 */
#include "pi.h"

enum { W = 20, H = 10, MAX = W * H };

static struct {
	pi_buf id, timer;
	int x[MAX], y[MAX], len, dx, dy, fx, fy, score, high, over, paused;
	unsigned seed;
} g;

static unsigned rnd(void) { return g.seed = g.seed * 1103515245u + 12345u, (g.seed >> 16) & 0x7fff; }

static int on_snake(int x, int y) {
	for (int i = 0; i < g.len; i++)
		if (g.x[i] == x && g.y[i] == y) return 1;
	return 0;
}

static void place_food(void) {
	do {
		g.fx = (int)(rnd() % W), g.fy = (int)(rnd() % H);
	} while (on_snake(g.fx, g.fy));
}

static void reset(void) {
	g.len = 3, g.dx = 1, g.dy = 0, g.score = 0, g.over = 0, g.paused = 0;
	for (int i = 0; i < g.len; i++) g.x[i] = 5 - i, g.y[i] = H / 2;
	place_food();
}

/* high_score reads the best score the session holds. */
static void high_score(void) {
	pi_buf e = {0};
	if (!pi_session_entries("snake", &e)) {
		size_t i = 0;
		pi_json v;
		while (pi_json_next(pi_json_parse(e.p, e.n), &i, NULL, &v)) {
			double s = 0;
			if (pi_json_num(pi_json_get(pi_json_get(v, "data"), "highScore"), &s) && s > g.high) g.high = (int)s;
		}
	}
	pi_buf_free(&e);
}

static void stop_timer(void) {
	if (g.timer.n) pi_timer_clear(g.timer.p);
	pi__buf_reset(&g.timer);
}

static void step(void) {
	int nx = g.x[0] + g.dx, ny = g.y[0] + g.dy;
	if (nx < 0 || nx >= W || ny < 0 || ny >= H || on_snake(nx, ny)) {
		g.over = 1;
		stop_timer();
		if (g.score > g.high) {
			char d[48];
			g.high = g.score;
			snprintf(d, sizeof d, "{\"highScore\":%d}", g.high);
			pi_session_append("snake", d, NULL);
		}
		return;
	}
	int grow = nx == g.fx && ny == g.fy;
	if (grow && g.len < MAX) g.len++;
	for (int i = g.len - 1; i > 0; i--) g.x[i] = g.x[i - 1], g.y[i] = g.y[i - 1];
	g.x[0] = nx, g.y[0] = ny;
	if (grow) {
		g.score += 10;
		place_food();
	}
}

static void timer(const char *id) {
	(void)id;
	if (g.over || g.paused || !g.id.n) return;
	step();
	pi_ui_rerender(g.id.p);
}

static void render(const char *id, int width, const char *editor_text, int cursor, pi_lines *out) {
	(void)id, (void)width, (void)editor_text, (void)cursor;
	pi_lines_span(out, "SNAKE", "accent bold");
	pi_lines_printf(out, "score %d  best %d%s", g.score, g.high, g.paused ? "  (paused)" : "");
	pi_buf row = {0};
	pi__buf_reset(&row);
	for (int y = -1; y <= H; y++) {
		pi__buf_reset(&row);
		for (int x = -1; x <= W; x++) {
			const char *c = (y < 0 || y == H || x < 0 || x == W) ? "#" : (g.x[0] == x && g.y[0] == y) ? "@" : on_snake(x, y) ? "o" : (g.fx == x && g.fy == y) ? "*" : " ";
			pi_buf_cstr(&row, c);
		}
		pi_lines_span(out, row.p, y < 0 || y == H ? "border" : NULL);
		pi_lines_end(out);
	}
	pi_buf_free(&row);
	if (g.over) pi_lines_span(out, "GAME OVER: space plays again, q quits", "error");
	else pi_lines_span(out, "arrows/WASD steer, p pauses, q quits", "muted");
	pi_lines_end(out);
}

static int input(const char *id, const char *key, const char *text) {
	(void)id, (void)text;
	if (!strcmp(key, "q") || !strcmp(key, "escape")) return PI_CONSUMED | PI_CLOSE;
	if (g.over) {
		if (!strcmp(key, "space")) {
			reset();
			pi_timer_set(150, 1, &g.timer);
		}
		return PI_CONSUMED | PI_RERENDER;
	}
	int dx = g.dx, dy = g.dy;
	if (!strcmp(key, "up") || !strcmp(key, "w")) dx = 0, dy = -1;
	else if (!strcmp(key, "down") || !strcmp(key, "s")) dx = 0, dy = 1;
	else if (!strcmp(key, "left") || !strcmp(key, "a")) dx = -1, dy = 0;
	else if (!strcmp(key, "right") || !strcmp(key, "d")) dx = 1, dy = 0;
	else if (!strcmp(key, "p")) g.paused = !g.paused;
	else if (!strcmp(key, "n")) step(); /* one step by hand */
	if (dx != -g.dx || dy != -g.dy) g.dx = dx, g.dy = dy; /* never straight back */
	return PI_CONSUMED | PI_RERENDER;
}

static void dispose(const char *id, const char *reason) {
	(void)id, (void)reason;
	stop_timer();
	pi__buf_reset(&g.id);
}

static int snake(const char *args, pi_buf *text, pi_buf *prompt) {
	(void)prompt;
	g.seed = 42;
	high_score();
	reset();
	/* "slow" (for tests and slow terminals): the snake moves only on n */
	int slow = !strcmp(args, "slow");
	pi_component_opts o = {PI_SLOT_OVERLAY, NULL, NULL, H + 5};
	if (pi_ui_component(&o, &g.id)) {
		pi_buf_cstr(text, pi_host_error());
		return 1;
	}
	if (!g.id.n) {
		pi_buf_cstr(text, "Snake needs pi's terminal UI.");
		return 0;
	}
	if (!slow && pi_timer_set(150, 1, &g.timer)) pi_log(PI_WARN, "%s", pi_host_error());
	return 0;
}

static const pi_command commands[] = {
	{"snake", "Play Snake", "[slow]", snake},
	{NULL, NULL, NULL, NULL},
};

const pi_extension pi_ext = {
	.declaration = "{\"name\":\"snake\",\"version\":\"0.1.0\",\"description\":\"Snake in an overlay.\",\"tools\":[]}",
	.commands = commands,
	.component_render = render,
	.component_input = input,
	.component_dispose = dispose,
	.timer = timer,
};
