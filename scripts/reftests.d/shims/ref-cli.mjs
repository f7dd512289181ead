// Runs the reference agent's published build (the checkout's version, in
// the cache's node_modules: REFTESTS_REFERENCE_CLI) in place of its dist/cli.js, which a checkout
// does not have built, for the reference's own run of rpc.test.ts. It gives
// the reference the same echo model as pi: a models.json in the agent folder
// the test names (PI_CODING_AGENT_DIR) points the model the test asks for
// at echo-server.mjs (echo-models.mjs).
import { spawn } from "node:child_process";
import { flag, writeEchoModels } from "./echo-models.mjs";

const argv = process.argv.slice(2);
const dir = process.env.PI_CODING_AGENT_DIR;
if (dir) writeEchoModels(dir, flag(argv, "--provider"), flag(argv, "--model"));
const child = spawn(process.execPath, [process.env.REFTESTS_REFERENCE_CLI, ...argv], { stdio: "inherit" });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
