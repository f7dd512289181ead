// Prints the per-file figures of a reftests run from vitest's JSON reports:
//   node report.mjs PI_JSON REFERENCE_JSON DOC
// A pi failure whose error starts with "[not applicable]" (a shim that has
// no mapping) is counted apart. pi's failures are grouped by the reason
// DOC (docs/reftests.md) gives for each under "## Failing against pi"; a
// failure it does not list, and a test it lists that passed, are named.
// The last line is pi's "N passed, N failed (N not accounted for)".
import { existsSync, readFileSync } from "node:fs";

const [piFile, refFile, docFile] = process.argv.slice(2);
const NA = "[not applicable]";

// reasons maps "FILE > FULL NAME" to the "### " heading it is listed under
// in the doc's "## Failing against pi" section (as "- `FILE > FULL NAME`").
function reasons(file) {
	const out = new Map();
	if (!file || !existsSync(file)) return out;
	let inSection = false;
	let reason = "";
	for (const line of readFileSync(file, "utf8").split("\n")) {
		if (line.startsWith("## ")) inSection = line.trim() === "## Failing against pi";
		else if (inSection && line.startsWith("### ")) reason = line.slice(4).trim();
		else if (inSection) {
			const m = /^- `([^`]+)`/.exec(line);
			if (m) out.set(m[1], reason);
		}
	}
	return out;
}

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
const known = reasons(docFile);
const UNLISTED = "not accounted for in docs/reftests.md";
const groups = new Map();
const na = [];
const fixed = [];
for (const f of files) {
	for (const t of pi.get(f) ?? []) {
		const key = `${f} > ${t.name}`;
		const row = `  ${key}\n      ${firstLine(t.error).slice(0, 300)}`;
		if (t.status === "failed" && t.error.includes(NA)) na.push(row);
		else if (t.status === "failed") {
			const why = known.get(key) ?? UNLISTED;
			if (!groups.has(why)) groups.set(why, []);
			groups.get(why).push(row);
		} else if (t.status === "passed" && known.has(key)) fixed.push(`  ${key}`);
	}
}
if (groups.size) console.log(`\nfailing against pi (${total.failed}), by reason:`);
for (const [why, rows] of [...groups].sort(([a], [b]) => (a === UNLISTED) - (b === UNLISTED) || a.localeCompare(b))) {
	console.log(`\n${why} (${rows.length}):\n${rows.join("\n")}`);
}
if (na.length) console.log(`\nnot applicable to pi (${na.length}):\n${na.join("\n")}`);
if (fixed.length) console.log(`\nlisted as failing in docs/reftests.md but passed (${fixed.length}): update the list\n${fixed.join("\n")}`);
const unlisted = groups.get(UNLISTED)?.length ?? 0;
console.log(`\nreftests: ${total.passed} passed, ${total.failed} failed (${unlisted} not accounted for)`);
