// client_models.mjs drives `pi --mode rpc` with the reference agent's own
// RpcClient through models and thinking levels: get_state,
// set_thinking_level, cycle_thinking_level, get_available_models,
// cycle_model (the --models scope), set_model, get_session_stats. Run by
// TestReferenceRPCModels (rpc_test.go) with a models.json whose provider
// "local" is the test server.
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

const { RpcClient } = await import(pathToFileURL(path.join(process.env.REF_PKG, "dist/modes/rpc/rpc-client.js")).href);

const client = new RpcClient({
	cliPath: process.env.PI_SHIM,
	cwd: process.env.WORK_DIR,
	args: ["--model", "local/qwen", "--models", "local/qwen,local/plain"],
});
const step = (name) => process.stdout.write(`step: ${name}\n`);

await client.start();
try {
	step("get_state: the models file's model, the default level");
	const s0 = await client.getState();
	assert.equal(s0.model.provider, "local");
	assert.equal(s0.model.id, "qwen");
	assert.equal(s0.model.api, "openai-completions");
	assert.equal(s0.model.reasoning, true);
	assert.equal(s0.model.contextWindow, 32000);
	assert.deepEqual(s0.model.cost, { input: 2, output: 10, cacheRead: 0.5, cacheWrite: 0 });
	assert.deepEqual(s0.model.thinkingLevelMap, { xhigh: "max" });
	assert.equal(s0.thinkingLevel, "medium");

	step("set_thinking_level, cycle_thinking_level wraps through every level");
	await client.setThinkingLevel("high");
	assert.equal((await client.getState()).thinkingLevel, "high");
	assert.deepEqual(await client.cycleThinkingLevel(), { level: "xhigh" });
	assert.deepEqual(await client.cycleThinkingLevel(), { level: "off" });
	assert.deepEqual(await client.cycleThinkingLevel(), { level: "minimal" });
	await client.setThinkingLevel("low");

	step("get_available_models");
	const avail = await client.getAvailableModels();
	const refs = avail.map((m) => `${m.provider}/${m.id}`);
	assert.ok(refs.includes("local/qwen") && refs.includes("local/plain"), refs.join(","));
	assert.equal(avail.find((m) => m.id === "plain").contextWindow, 128000);

	step("cycle_model goes through the scope");
	const c1 = await client.cycleModel();
	assert.equal(c1.model.id, "plain");
	assert.equal(c1.thinkingLevel, "off");
	assert.equal(c1.isScoped, true);
	assert.equal(await client.cycleThinkingLevel(), null);

	step("set_model back: a reasoning model starts at the default level again");
	const m = await client.setModel("local", "qwen");
	assert.equal(m.id, "qwen");
	assert.equal((await client.getState()).thinkingLevel, "medium");
	await client.setThinkingLevel("high");

	step("set_model to a provider without its key");
	await assert.rejects(client.setModel("groq", "openai/gpt-oss-120b"), /GROQ_API_KEY/);

	step("prompt, get_session_stats: the cost from the model's prices");
	await client.promptAndWait("hello");
	const st = await client.getSessionStats();
	assert.equal(st.tokens.input, 1000);
	assert.equal(st.tokens.output, 100);
	assert.ok(Math.abs(st.cost - 0.003) < 1e-12, `cost ${st.cost}`);
	step("done");
} finally {
	await client.stop();
}
