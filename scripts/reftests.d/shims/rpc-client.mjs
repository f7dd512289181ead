// Stands in for the reference's src/modes/rpc/rpc-client.ts: the
// reference's own RpcClient, started on pi-cli.mjs (pi --mode rpc) in the
// pi run, or on ref-cli.mjs (the reference's published build of the
// checkout's version) in the reference's run, instead of the checkout's
// dist/cli.js, which is not built.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcClient as ReferenceRpcClient } from "../../pi-mono/packages/coding-agent/src/modes/rpc/rpc-client.ts";

const launcher = join(dirname(fileURLToPath(import.meta.url)), process.env.REFTESTS_TARGET === "reference" ? "ref-cli.mjs" : "pi-cli.mjs");

export class RpcClient extends ReferenceRpcClient {
	constructor(options = {}) {
		super({ ...options, cliPath: launcher });
	}
}
