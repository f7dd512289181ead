// Stands in for the reference's src/modes/rpc/rpc-client.ts when its tests
// run against pi: the reference's own RpcClient, started on pi-cli.mjs
// (which runs pi --mode rpc) instead of the reference's dist/cli.js.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcClient as ReferenceRpcClient } from "../pi-mono/packages/coding-agent/src/modes/rpc/rpc-client.ts";

const launcher = join(dirname(fileURLToPath(import.meta.url)), "pi-cli.mjs");

export class RpcClient extends ReferenceRpcClient {
	constructor(options = {}) {
		super({ ...options, cliPath: launcher });
	}
}
