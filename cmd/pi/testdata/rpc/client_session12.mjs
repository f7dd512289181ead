// client_session12.mjs drives `pi --mode rpc` with an ABI 1.2 extension
// loaded (the conv12 test guest as conv12b: its session_before_switch,
// session_before_fork and session_before_compact hooks cancel, its
// user_bash hook blocks) through the reference agent's own RpcClient, and
// checks the answers ABI 1.2 gives: new_session and fork answer
// cancelled: true, compact fails with "compaction cancelled by extension
// conv12b", bash fails with the hook's reason. Run by
// TestReferenceRPCClientSession12 (rpc_test.go).
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
	args: ["--base-url", process.env.MODEL_URL, "--model", "m1",
		"-e", process.env.EXT_WASM, "--ext-config", 'cancel=["switch","fork","compact"]', "--ext-config", 'userBash="block"'],
});
const step = (name) => process.stdout.write(`step: ${name}\n`);

await client.start();
try {
	step("a prompt runs");
	await client.promptAndWait("hello");
	const before = await client.getState();

	step("new_session is cancelled by the extension");
	assert.deepEqual(await client.newSession(), { cancelled: true });
	assert.equal((await client.getState()).sessionId, before.sessionId);

	step("fork is cancelled by the extension");
	const points = await client.getForkMessages();
	assert.equal(points.length, 1);
	const forked = await client.fork(points[0].entryId);
	assert.equal(forked.cancelled, true);
	assert.equal((await client.getState()).sessionId, before.sessionId);

	step("compact fails, naming the extension");
	await assert.rejects(client.compact(), /compaction cancelled by extension conv12b/);

	step("bash is blocked with the hook's reason");
	await assert.rejects(client.bash("echo hi"), /no shell today/);
	assert.equal((await client.getMessages()).length, 2);

	step("done");
} finally {
	await client.stop();
}
