// client_ext.mjs drives `pi --mode rpc` with an extension loaded (the raw
// ABI 1.1 test guest: an input hook that refuses prompts holding
// "password=" and appends " (checked)" to the others; commands /raw and
// /probe) through the reference agent's own RpcClient, and checks that RPC
// gets what -p and the TUI get: the input hook, the extension command and
// get_commands. Run by TestReferenceRPCClientExtensions (rpc_test.go).
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
	args: ["--base-url", process.env.MODEL_URL, "--model", "m1", "--no-session",
		"-e", process.env.EXT_WASM, "--ext-config", 'inputSecret="password="', "--ext-config", 'inputSuffix=" (checked)"'],
});
const events = [];
client.onEvent((e) => events.push(e));
const step = (name) => process.stdout.write(`step: ${name}\n`);
const notices = () => events.filter((e) => e.type === "extension_ui_request" && e.method === "notify").map((e) => e.message);

await client.start();
try {
	step("get_commands lists the extension's commands");
	const cmds = await client.getCommands();
	const names = cmds.map((c) => c.name).sort();
	assert.deepEqual(names, ["probe", "raw"]);
	for (const c of cmds) {
		assert.equal(c.source, "extension");
	}
	assert.equal(cmds.find((c) => c.name === "raw").description, "echo the arguments");

	step("a prompt the input hook refuses never reaches the model");
	await client.prompt("my password=hunter2 is here");
	// A handled prompt starts no run: the hook's message comes as a notice.
	await waitFor(() => notices().includes("refused: the prompt holds a secret"));
	assert.equal(events.filter((e) => e.type === "agent_start").length, 0);
	assert.equal((await client.getMessages()).length, 0);

	step("an extension command runs (after the input hook, which sees the raw line), its text is a notice, nothing goes to the model");
	await client.prompt("/raw hello there");
	await waitFor(() => notices().includes("raw: hello there (checked)"));
	assert.equal(events.filter((e) => e.type === "agent_start").length, 0);

	step("a command's prompt goes to the model; a plain prompt passes the hook");
	const run1 = await client.promptAndWait("/raw ask summarize the plan");
	assert.equal(run1.at(-1).type, "agent_end");
	const run2 = await client.promptAndWait("plain question");
	assert.equal(run2.at(-1).type, "agent_end");
	const msgs = await client.getMessages();
	const users = msgs.filter((m) => m.role === "user").map((m) => typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join(""));
	// The hook saw both lines; the command's prompt goes on without hooks.
	assert.deepEqual(users, ["summarize the plan (checked)", "plain question (checked)"]);

	step("an unknown command is answered, not sent");
	await client.prompt("/nosuch x");
	await waitFor(() => notices().some((m) => m.includes("unknown command /nosuch")));
	assert.equal((await client.getMessages()).length, msgs.length);

	step("done");
} finally {
	await client.stop();
}

// waitFor polls cond on the events the client received (it has no other
// signal for a prompt that started no run); it gives up after 20 s.
async function waitFor(cond) {
	for (let i = 0; i < 400; i++) {
		if (cond()) {
			return;
		}
		await new Promise((r) => setTimeout(r, 50));
	}
	throw new Error("timed out; events: " + JSON.stringify(events.map((e) => e.type === "extension_ui_request" ? e.message : e.type)));
}
