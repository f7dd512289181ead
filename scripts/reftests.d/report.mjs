// Prints the per-file figures of a reftests run from vitest's JSON reports:
//   node report.mjs PI_JSON REFERENCE_JSON
// A pi failure whose error starts with "[not applicable]" (a shim that has
// no mapping) is counted apart. The last line is pi's "N passed, N failed".
import { existsSync, readFileSync } from "node:fs";

const [piFile, refFile] = process.argv.slice(2);
const NA = "[not applicable]";

function load(file) {
	const byFile = new Map();
	if (!file || !existsSync(file)) return null;
	const data = JSON.parse(readFileSync(file, "utf8"));
	for (const tr of data.testResults ?? []) {
		const name = tr.name.replace(/^.*\/packages\/coding-agent\/test\//, "");
		const tests = (tr.assertionResults ?? []).map((a) => ({
			name: a.fullName,
			status: a.status,
			error: (a.failureMessages ?? []).join("\n"),
		}));
		if (tests.length === 0 && tr.status === "failed") {
			tests.push({ name: "(the file did not load)", status: "failed", error: tr.message ?? "" });
		}
		byFile.set(name, tests);
	}
	return byFile;
}

function count(tests) {
	const c = { passed: 0, failed: 0, na: 0, skipped: 0 };
	for (const t of tests ?? []) {
		if (t.status === "passed") c.passed++;
		else if (t.status === "failed" && t.error.includes(NA)) c.na++;
		else if (t.status === "failed") c.failed++;
		else c.skipped++;
	}
	return c;
}

const pi = load(piFile);
const ref = load(refFile);
if (!pi) {
	console.log("reftests: no results from the pi run");
	process.exit(1);
}
const files = [...new Set([...pi.keys(), ...(ref?.keys() ?? [])])].sort();
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad("file", 44)} ${pad("pi pass/fail/n.a./skip", 24)} reference pass/fail/skip`);
const total = { passed: 0, failed: 0, na: 0, skipped: 0 };
const refTotal = { passed: 0, failed: 0, na: 0, skipped: 0 };
for (const f of files) {
	const p = count(pi.get(f));
	const r = count(ref?.get(f));
	for (const k of Object.keys(total)) {
		total[k] += p[k];
		refTotal[k] += r[k];
	}
	const refCol = ref ? `${r.passed}/${r.failed + r.na}/${r.skipped}` : "not run";
	console.log(`${pad(f, 44)} ${pad(`${p.passed}/${p.failed}/${p.na}/${p.skipped}`, 24)} ${refCol}`);
}
console.log(`${pad("total", 44)} ${pad(`${total.passed}/${total.failed}/${total.na}/${total.skipped}`, 24)} ${ref ? `${refTotal.passed}/${refTotal.failed + refTotal.na}/${refTotal.skipped}` : "not run"}`);

const firstLine = (e) => e.split("\n").find((l) => l.trim()) ?? "";
for (const [label, want] of [
	["failing against pi", (t) => t.status === "failed" && !t.error.includes(NA)],
	["not applicable to pi", (t) => t.status === "failed" && t.error.includes(NA)],
]) {
	const rows = [];
	for (const f of files) for (const t of pi.get(f) ?? []) if (want(t)) rows.push(`  ${f} > ${t.name}\n      ${firstLine(t.error).slice(0, 300)}`);
	if (rows.length) console.log(`\n${label} (${rows.length}):\n${rows.join("\n")}`);
}
console.log(`\nreftests: ${total.passed} passed, ${total.failed} failed`);
