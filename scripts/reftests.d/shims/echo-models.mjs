// The models.json both runs of rpc.test.ts get in the test's agent folder
// (PI_CODING_AGENT_DIR): the provider and model the test asks for
// (anthropic/claude-sonnet-4-5, which thinks) pointed at the loopback echo
// model (echo-server.mjs), in the reference's models-file format, which pi
// reads too.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes DIR/models.json naming provider's model at the echo model. */
export function writeEchoModels(dir, provider, model) {
	mkdirSync(dir, { recursive: true });
	const models = {
		providers: {
			[provider ?? "anthropic"]: {
				baseUrl: process.env.REFTESTS_BASE_URL,
				api: "openai-completions",
				apiKey: "reftests",
				compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
				models: [{ id: model ?? "claude-sonnet-4-5", contextWindow: 200000, reasoning: true }],
			},
		},
	};
	writeFileSync(join(dir, "models.json"), JSON.stringify(models));
}

/** The value of the flag name in argv, if any. */
export function flag(argv, name) {
	const i = argv.indexOf(name);
	return i >= 0 ? argv[i + 1] : undefined;
}
