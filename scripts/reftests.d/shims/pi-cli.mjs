// Runs pi in place of the reference's dist/cli.js, for the reference's
// RpcClient. PI_CODING_AGENT_DIR (the reference's agent folder) becomes
// PI_HOME, and gets the models.json the reference's run gets too
// (echo-models.mjs): the provider and model the test asks for, pointed at
// the echo model, so pi resolves `--provider anthropic --model
// claude-sonnet-4-5` as the reference does. Without an agent folder,
// --provider is dropped and --base-url names the echo model. Every other
// argument and variable reaches pi as it came.
import { spawn } from "node:child_process";
import { flag, writeEchoModels } from "./echo-models.mjs";

const argv = process.argv.slice(2);
const env = { ...process.env, OPENAI_API_KEY: process.env.OPENAI_API_KEY ?? "reftests" };
let args = argv;
const dir = process.env.PI_CODING_AGENT_DIR;
if (dir) {
	writeEchoModels(dir, flag(argv, "--provider"), flag(argv, "--model"));
	env.PI_HOME = dir;
} else {
	args = [];
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--provider") {
			i++;
			continue;
		}
		args.push(argv[i]);
	}
	args.push("--base-url", process.env.REFTESTS_BASE_URL);
}
const child = spawn(process.env.REFTESTS_PI, args, { stdio: "inherit", env });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
