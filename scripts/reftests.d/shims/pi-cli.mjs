// Runs pi in place of the reference's dist/cli.js, for the reference's
// RpcClient. It translates what pi does not take the reference's way:
//   --provider NAME   dropped (pi has no providers: one OpenAI-compatible
//                     endpoint), and --base-url set to the echo model
//                     (echo-server.mjs);
//   PI_CODING_AGENT_DIR (the reference's agent folder) becomes PI_HOME.
// Every other argument and variable reaches pi as it came.
import { spawn } from "node:child_process";

const args = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === "--provider") {
		i++;
		continue;
	}
	args.push(argv[i]);
}
args.push("--base-url", process.env.REFTESTS_BASE_URL);
const env = { ...process.env, OPENAI_API_KEY: process.env.OPENAI_API_KEY ?? "reftests" };
if (process.env.PI_CODING_AGENT_DIR) env.PI_HOME = process.env.PI_CODING_AGENT_DIR;
const child = spawn(process.env.REFTESTS_PI, args, { stdio: "inherit", env });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
