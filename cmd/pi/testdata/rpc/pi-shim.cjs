// pi-shim.cjs stands in for the reference agent's cli.js: RpcClient starts
// `node CLI_PATH --mode rpc ARGS...`, and this runs the pi binary named by
// $PI_BIN with those arguments on the same stdin, stdout and stderr,
// passes SIGTERM, SIGINT and SIGHUP on, and exits as pi exits.
"use strict";
const { spawn } = require("node:child_process");

const bin = process.env.PI_BIN;
if (!bin) {
	process.stderr.write("pi-shim: PI_BIN is not set\n");
	process.exit(2);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) {
	process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
	process.stderr.write(`pi-shim: ${err.message}\n`);
	process.exit(2);
});
child.on("exit", (code, signal) => {
	process.exit(code ?? (signal ? 128 : 1));
});
