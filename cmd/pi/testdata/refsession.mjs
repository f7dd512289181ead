// Drives the reference agent's own SessionManager for the tree
// interoperability tests (tree_interop_test.go): node refsession.mjs DIST
// dump FILE prints the tree, labels, leaf and context as JSON; node
// refsession.mjs DIST write DIR writes a session with labels, a branch and
// a branch summary and prints its file; node refsession.mjs DIST context
// FILE prints buildSessionContext() of the file as it is (messages,
// thinkingLevel, model).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [dist, mode, arg] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(join(dist, "core", "session-manager.js")).href);
const { convertToLlm } = await import(pathToFileURL(join(dist, "core", "messages.js")).href);

function text(content) {
	if (typeof content === "string") return content;
	return (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

if (mode === "dump") {
	const sm = SessionManager.open(arg);
	const nodes = [];
	const stack = [...sm.getTree()].reverse();
	while (stack.length > 0) {
		const n = stack.pop();
		nodes.push({ id: n.entry.id, parentId: n.entry.parentId, type: n.entry.type, label: n.label ?? "", children: n.children.map((c) => c.entry.id) });
		for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
	}
	const context = convertToLlm(sm.buildSessionContext().messages).map((m) => ({ role: m.role, text: text(m.content) }));
	console.log(JSON.stringify({ leaf: sm.getLeafId(), nodes, context }));
} else if (mode === "context") {
	console.log(JSON.stringify(SessionManager.open(arg).buildSessionContext()));
} else if (mode === "write") {
	const sm = SessionManager.create(process.cwd(), arg);
	const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const user = (t) => sm.appendMessage({ role: "user", content: [{ type: "text", text: t }], timestamp: Date.now() });
	const assistant = (t) => sm.appendMessage({ role: "assistant", content: [{ type: "text", text: t }], api: "openai-completions", provider: "loop", model: "m1", usage, stopReason: "stop", timestamp: Date.now() });
	user("hello");
	const first = assistant("first answer");
	sm.appendLabelChange(first, "start");
	user("try approach A");
	const a = assistant("approach A answer");
	sm.appendLabelChange(a, "A");
	const sum = sm.branchWithSummary(first, "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nREF SUMMARY OF A", { readFiles: ["x.go"], modifiedFiles: [] });
	sm.appendLabelChange(sum, "back");
	user("try approach B");
	assistant("approach B answer");
	sm.appendLabelChange(a, undefined);
	console.log(sm.getSessionFile());
}
