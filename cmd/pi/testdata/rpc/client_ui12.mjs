// client_ui12.mjs drives `pi --mode rpc` with the ABI 1.2 UI test guest
// (extensions/testdata/guests/ui12) through the reference agent's own
// RpcClient, and checks the extension UI requests against the reference's
// shapes: setStatus {statusKey, statusText?}, setWidget {widgetKey,
// widgetLines?, widgetPlacement}, setTitle {title}, set_editor_text {text},
// keys NAME:KEY, no text clearing; select, input and editor dialogs
// answered with value or cancelled; components "no-tui". Every text a
// guest sent with escape sequences arrives without control characters.
// Run by TestReferenceRPCClientUI12 (rpc_extui_test.go).
//
// Environment: REF_PKG, PI_BIN, PI_SHIM, MODEL_URL, WORK_DIR as client.mjs;
// EXT_WASM (the guest).
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

const { RpcClient } = await import(pathToFileURL(path.join(process.env.REF_PKG, "dist/modes/rpc/rpc-client.js")).href);

const client = new RpcClient({
	cliPath: process.env.PI_SHIM,
	cwd: process.env.WORK_DIR,
	args: ["--base-url", process.env.MODEL_URL, "--model", "m1", "--no-session", "-e", process.env.EXT_WASM],
});
const events = [];
const answers = [];
client.onEvent((e) => {
	events.push(e);
	if (e.type !== "extension_ui_request") {
		return;
	}
	const answer = (body) => client.process.stdin.write(JSON.stringify({ type: "extension_ui_response", id: e.id, ...body }) + "\n");
	switch (e.method) {
		case "select":
			answers.push(e);
			answer({ value: e.options[1] });
			break;
		case "input":
			answers.push(e);
			answer({ value: "ada" });
			break;
		case "editor":
			answers.push(e);
			answer({ cancelled: true });
			break;
	}
});
const step = (name) => process.stdout.write(`step: ${name}\n`);
const ui = (method) => events.filter((e) => e.type === "extension_ui_request" && e.method === method);
const notices = () => ui("notify").map((e) => e.message);
const esc = "]0;pwned[2J31mredXy";

await client.start();
try {
	step("statuses, widgets, the title and the editor text in the reference's shapes");
	await client.prompt("/show");
	await waitFor(() => notices().includes('shown; editor="" tui=false'));
	const [status] = ui("setStatus");
	assert.deepEqual(Object.keys(status).sort(), ["id", "method", "statusKey", "statusText", "type"]);
	assert.equal(status.statusKey, "ui12:st");
	assert.equal(status.statusText, "status" + esc);
	const [widget] = ui("setWidget");
	assert.equal(widget.widgetKey, "ui12:wd");
	assert.deepEqual(widget.widgetLines, ["widget one" + esc, "widget two"]);
	assert.equal(widget.widgetPlacement, "aboveEditor");
	assert.equal(ui("setTitle")[0].title, "title" + esc);
	assert.equal(ui("set_editor_text")[0].text, "from the extension");
	for (const e of events) {
		assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(JSON.stringify(e).replace(/\\[nrt"\\]/g, "")), "a control character in " + JSON.stringify(e));
	}

	step("no text clears");
	await client.prompt("/clear");
	await waitFor(() => notices().includes("cleared"));
	const clear = ui("setStatus")[1];
	assert.equal(clear.statusKey, "ui12:st");
	assert.ok(!("statusText" in clear));
	const wclear = ui("setWidget")[1];
	assert.ok(!("widgetLines" in wclear));

	step("select, input and editor dialogs");
	await client.prompt("/ask");
	await waitFor(() => notices().some((m) => m.startsWith("picked")));
	assert.deepEqual(answers.map((e) => e.method), ["select", "input", "editor"]);
	assert.equal(answers[0].title, "[ui12] Pick one" + esc);
	assert.equal(answers[0].options[0], "alpha" + esc);
	assert.equal(answers[0].options[1], "beta");
	assert.equal(answers[1].placeholder, "name");
	assert.equal(answers[2].prefill, "once upon");
	assert.ok(notices().includes('picked "beta", name "ada"/, story ""/cancelled'), JSON.stringify(notices()));

	step("components are no-tui");
	await client.prompt("/counter");
	await waitFor(() => notices().includes("no component (no-tui)"));

	step("done");
} finally {
	await client.stop();
}

// waitFor polls cond on the events the client received (a command starts
// no run); it gives up after 20 s.
async function waitFor(cond) {
	for (let i = 0; i < 400; i++) {
		if (cond()) {
			return;
		}
		await new Promise((r) => setTimeout(r, 50));
	}
	throw new Error("timed out; events: " + JSON.stringify(events.filter((e) => e.type === "extension_ui_request")));
}
