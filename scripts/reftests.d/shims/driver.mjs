// The synchronous client of pi's session driver (internal/refdriver).
//
// The reference's SessionManager and helpers are synchronous, so a shim
// cannot await a child process. The driver is started once per test worker
// and spoken to over two named pipes with blocking reads and writes
// (fs.readSync on a FIFO blocks until the driver answers).
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Marks a call the adapter cannot map to pi; the report counts it "not applicable". */
export const NOT_APPLICABLE = "[not applicable]";

export function notApplicable(what, why) {
	return new Error(`${NOT_APPLICABLE} ${what}: ${why}`);
}

/** A feature pi lacks: the test fails, and the message says what is missing. */
export function missing(what, why) {
	return new Error(`[pi lacks] ${what}: ${why}`);
}

let conn;

function connect() {
	const bin = process.env.REFTESTS_DRIVER;
	if (!bin) throw new Error("REFTESTS_DRIVER is not set: run the tests with scripts/reftests");
	const dir = mkdtempSync(join(tmpdir(), "reftests-driver-"));
	const req = join(dir, "req");
	const resp = join(dir, "resp");
	execFileSync("mkfifo", [req, resp]);
	const child = spawn(bin, [req, resp], { stdio: ["ignore", "inherit", "inherit"] });
	child.unref();
	// The driver opens req for reading, then resp for writing: open in the
	// same order, so neither side waits for the other forever.
	const w = openSync(req, "w");
	const r = openSync(resp, "r");
	rmSync(dir, { recursive: true, force: true });
	conn = { w, r, pending: Buffer.alloc(0) };
	process.once("exit", () => {
		closeSync(w);
		closeSync(r);
	});
}

/** call sends {op, ...args} to pi's driver and returns its result, or throws its error. */
export function call(op, args = {}) {
	if (!conn) connect();
	writeSync(conn.w, `${JSON.stringify({ op, ...args })}\n`);
	let nl;
	while ((nl = conn.pending.indexOf(10)) < 0) {
		const chunk = Buffer.alloc(1 << 16);
		const n = readSync(conn.r, chunk, 0, chunk.length, null);
		if (n === 0) throw new Error("pi's session driver exited");
		conn.pending = Buffer.concat([conn.pending, chunk.subarray(0, n)]);
	}
	const line = conn.pending.subarray(0, nl).toString("utf8");
	conn.pending = conn.pending.subarray(nl + 1);
	const resp = JSON.parse(line);
	if (!resp.ok) throw new Error(`pi: ${resp.error}`);
	return resp.result;
}
