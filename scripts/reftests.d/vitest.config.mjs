// vitest configuration of scripts/reftests. It runs in the run folder the
// script lays out in the cache ($CACHE/run): pi-mono -> the checkout,
// node_modules -> the cache's, reftests.d -> this folder. Symlinks are kept
// as they are (preserveSymlinks), so the checkout's files find the cache's
// node_modules by walking up.
//
// REFTESTS_TARGET=pi maps the reference's modules under test to the shims
// (by the file an import resolves to, whatever its relative spelling);
// REFTESTS_TARGET=reference runs the checkout's own sources.
import { dirname, resolve } from "node:path";
import { defineConfig } from "vitest/config";

const run = process.cwd();
const src = resolve(run, "pi-mono/packages/coding-agent/src");
const shims = resolve(run, "reftests.d/shims");
const mapped = {
	"core/session-manager.ts": "session-manager.mjs",
	"core/compaction/index.ts": "compaction.mjs",
	"core/compaction/utils.ts": "compaction.mjs",
	"modes/rpc/rpc-client.ts": "rpc-client.mjs",
};
const target = process.env.REFTESTS_TARGET ?? "pi";
const files = (process.env.REFTESTS_FILES ?? "").split(",").filter(Boolean);

const toPi = {
	name: "reftests-map-to-pi",
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
	plugins: target === "pi" ? [toPi] : [],
	resolve: { preserveSymlinks: true },
	test: {
		root: run,
		include: files.map((f) => `pi-mono/packages/coding-agent/test/${f}`),
		globalSetup: target === "pi" ? [resolve(shims, "echo-server.mjs")] : [],
		testTimeout: 60000,
		pool: "forks",
		poolOptions: { forks: { singleFork: true } },
	},
});
