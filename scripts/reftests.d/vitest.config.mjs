// vitest configuration of scripts/reftests. Its root is the run folder the
// script lays out in the cache (REFTESTS_RUN): pi-mono -> the checkout,
// node_modules -> the cache's, reftests.d -> this folder. vitest is started
// in the checkout's packages/coding-agent, where the tests expect to run
// (rpc.test.ts looks for a relative file the agent wrote there). Symlinks are kept
// as they are (preserveSymlinks), so the checkout's files find the cache's
// node_modules by walking up.
//
// REFTESTS_TARGET=pi maps the reference's modules under test to the shims
// (by the file an import resolves to, whatever its relative spelling);
// REFTESTS_TARGET=reference runs the checkout's own sources, but for the RPC
// client, started on the reference's published build (the checkout's
// dist/cli.js is not built). Both talk to the same echo model.
import { dirname, resolve } from "node:path";
import { defineConfig } from "vitest/config";

const run = process.env.REFTESTS_RUN;
if (!run) throw new Error("REFTESTS_RUN is not set: run the tests with scripts/reftests");
const src = resolve(run, "pi-mono/packages/coding-agent/src");
const shims = resolve(run, "reftests.d/shims");
const target = process.env.REFTESTS_TARGET ?? "pi";
const mapped = {
	"modes/rpc/rpc-client.ts": "rpc-client.mjs",
	...(target === "pi"
		? {
				"core/session-manager.ts": "session-manager.mjs",
				"core/compaction/index.ts": "compaction.mjs",
				"core/compaction/utils.ts": "compaction.mjs",
			}
		: {}),
};
const files = (process.env.REFTESTS_FILES ?? "").split(",").filter(Boolean);

const shim = {
	name: "reftests-shims",
	enforce: "pre",
	resolveId(source, importer) {
		if (!importer || !source.startsWith(".") || importer.startsWith(shims)) return null;
		const file = resolve(dirname(importer), source).replace(/\.js$/, ".ts");
		for (const [from, to] of Object.entries(mapped)) {
			if (file === resolve(src, from)) return resolve(shims, to);
		}
		return null;
	},
};

export default defineConfig({
	plugins: [shim],
	resolve: { preserveSymlinks: true },
	test: {
		root: run,
		include: files.map((f) => `pi-mono/packages/coding-agent/test/${f}`),
		globalSetup: [resolve(shims, "echo-server.mjs")],
		testTimeout: 60000,
		pool: "forks",
		poolOptions: { forks: { singleFork: true } },
	},
});
