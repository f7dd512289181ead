// Runs the reference agent's published build (the checkout's version, in
// the cache's node_modules: REFTESTS_REFERENCE_CLI) in place of its dist/cli.js, which a checkout
// does not have built, for the reference's own run of rpc.test.ts. It gives
// the reference the same echo model as pi: a models.json in the agent folder
// the test names (PI_CODING_AGENT_DIR) points the model the test asks for
// at echo-server.mjs.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const argv = process.argv.slice(2);
const arg = (name) => {
	const i = argv.indexOf(name);
	return i >= 0 ? argv[i + 1] : undefined;
};
const dir = process.env.PI_CODING_AGENT_DIR;
if (dir) {
	mkdirSync(dir, { recursive: true });
	const models = {
		providers: {
			[arg("--provider") ?? "anthropic"]: {
				baseUrl: process.env.REFTESTS_BASE_URL,
				api: "openai-completions",
				apiKey: "reftests",
				compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
				// The model the test asks for (claude-sonnet-4-5) thinks.
				models: [{ id: arg("--model") ?? "claude-sonnet-4-5", contextWindow: 200000, reasoning: true }],
			},
		},
	};
	writeFileSync(join(dir, "models.json"), JSON.stringify(models));
}
const child = spawn(process.execPath, [process.env.REFTESTS_REFERENCE_CLI, ...argv], { stdio: "inherit" });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
