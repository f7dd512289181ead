// client.mjs drives `pi --mode rpc` with the reference agent's own RPC
// client (RpcClient of @mariozechner/pi-coding-agent) and checks what it
// gets back; it exits non-zero on the first failed check. Run by
// TestReferenceRPCClient (rpc_test.go), which starts the model server.
//
// Environment: REF_PKG (the installed package's folder), PI_BIN (the pi
// binary), PI_SHIM (pi-shim.cjs), MODEL_URL (the test server), WORK_DIR.
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

const { RpcClient } = await import(pathToFileURL(path.join(process.env.REF_PKG, "dist/modes/rpc/rpc-client.js")).href);

const client = new RpcClient({
	cliPath: process.env.PI_SHIM,
	cwd: process.env.WORK_DIR,
	args: ["--base-url", process.env.MODEL_URL, "--model", "m1"],
});
const events = [];
client.onEvent((e) => events.push(e));
const step = (name) => process.stdout.write(`step: ${name}\n`);

await client.start();
try {
	step("get_state");
	const s0 = await client.getState();
	assert.equal(s0.model.id, "m1");
	assert.equal(s0.isStreaming, false);
	assert.equal(s0.messageCount, 0);
	assert.match(s0.sessionId, /^[0-9a-f-]{36}$/);

	step("follow_up, then prompt: events until agent_end");
	await client.followUp("and one more thing");
	const run1 = await client.promptAndWait("hello");
	const types = run1.map((e) => e.type);
	for (const t of ["agent_start", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"]) {
		assert.ok(types.includes(t), `no ${t} event: ${types.join(",")}`);
	}
	const deltas = run1.filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta").map((e) => e.assistantMessageEvent.delta);
	assert.equal(deltas.join(""), "Hi there!More here.");
	assert.ok(events.some((e) => e.type === "queue_update" && e.followUp.length === 1), "no queue_update for the follow-up");
	assert.equal(run1.at(-1).stopReason, "stop");

	step("get_messages, get_last_assistant_text");
	const msgs = await client.getMessages();
	assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
	assert.equal(msgs[0].content[0].text, "hello");
	assert.equal(msgs[3].content[0].text, "More here.");
	assert.equal(await client.getLastAssistantText(), "More here.");

	step("bash");
	const b = await client.bash("echo from-bash; exit 3");
	assert.equal(b.output, "from-bash\n");
	assert.equal(b.exitCode, 3);
	assert.equal(b.cancelled, false);
	assert.equal(b.truncated, false);

	step("compact");
	const c = await client.compact("keep the greeting");
	assert.match(c.summary, /Summary of the talk/);
	assert.ok(c.tokensBefore > 0);
	assert.ok(events.some((e) => e.type === "compaction_end" && e.reason === "manual"));
	const afterCompact = await client.getMessages();
	assert.equal(afterCompact[0].role, "compactionSummary");

	step("confirm over the extension UI sub-protocol: declined");
	const asked = [];
	const stopAsking = client.onEvent((e) => {
		if (e.type === "extension_ui_request" && e.method === "confirm") {
			asked.push(e);
			client.process.stdin.write(JSON.stringify({ type: "extension_ui_response", id: e.id, confirmed: false }) + "\n");
		}
	});
	const run2 = await client.promptAndWait("clean up");
	stopAsking();
	assert.equal(asked.length, 1);
	assert.equal(asked[0].title, "Allow bash?");
	assert.match(asked[0].message, /\$ rm -f nothing-here/);
	const end2 = run2.find((e) => e.type === "tool_execution_end");
	assert.equal(end2.isError, true);
	assert.match(end2.result.content[0].text, /the user did not approve it/);

	step("abort while a tool runs");
	let aborting = null;
	const stopWatching = client.onEvent((e) => {
		if (e.type === "tool_execution_start" && e.args.command === "sleep 30" && !aborting) {
			aborting = client.abort();
		}
	});
	const t0 = Date.now();
	const run3 = await client.promptAndWait("take a nap");
	await aborting;
	stopWatching();
	assert.ok(Date.now() - t0 < 20000, "abort did not stop the sleep");
	assert.equal(run3.at(-1).stopReason, "aborted");
	assert.equal((await client.getState()).isStreaming, false);

	step("set_session_name, get_session_stats");
	await client.setSessionName("rpc acceptance");
	const s1 = await client.getState();
	assert.equal(s1.sessionName, "rpc acceptance");
	const stats = await client.getSessionStats();
	assert.equal(stats.sessionId, s1.sessionId);

	step("new_session");
	const ns = await client.newSession();
	assert.deepEqual(ns, { cancelled: false });
	const s2 = await client.getState();
	assert.notEqual(s2.sessionId, s1.sessionId);
	assert.equal(s2.messageCount, 0);
	assert.deepEqual(await client.getMessages(), []);
	// No answer: no text at all (the reference sends {}, not null).
	assert.equal(await client.getLastAssistantText(), undefined);

	step("unknown command and errors");
	const unknown = await client.send({ type: "frobnicate" });
	assert.equal(unknown.success, false);
	assert.equal(unknown.error, "Unknown command: frobnicate");
	const empty = await client.send({ type: "set_session_name", name: "  " });
	assert.equal(empty.success, false);
	assert.equal(empty.error, "Session name cannot be empty");
	const bad = await client.send({ type: "prompt", message: "x", streamingBehavior: "later" });
	assert.equal(bad.success, false);
	assert.deepEqual(await client.getCommands(), []);
	step("done");
} finally {
	await client.stop();
}
