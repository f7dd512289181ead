// Runs the reference agent's own code for the tests of runtime/skills
// (ref_test.go). node ref.mjs DIST MODE, input as JSON on stdin:
//   discover {cwd, agentDir}: the reference's resource loader (HOME as the
//     test sets it) finds the skills and templates; prints the skills'
//     names and files, the prompt block, the templates' names,
//     descriptions and contents.
//   expand [{content, args}]: substituteArgs(content, parseCommandArgs(args)).
//   skillcmd {cwd, agentDir, text}: the reference's /skill: expansion.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [dist, mode] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const input = JSON.parse(await new Promise((resolve) => {
	let s = "";
	process.stdin.on("data", (d) => (s += d));
	process.stdin.on("end", () => resolve(s));
}));

async function loader(cwd, agentDir) {
	const { DefaultResourceLoader } = await load("core/resource-loader.js");
	const rl = new DefaultResourceLoader({ cwd, agentDir, noExtensions: true, noThemes: true, noContextFiles: true });
	await rl.reload();
	return rl;
}

if (mode === "discover") {
	const { formatSkillsForPrompt } = await load("core/skills.js");
	const rl = await loader(input.cwd, input.agentDir);
	const { skills } = rl.getSkills();
	const { prompts } = rl.getPrompts();
	console.log(JSON.stringify({
		skills: skills.map((s) => ({ name: s.name, file: s.filePath, hidden: s.disableModelInvocation, sourceInfo: s.sourceInfo })),
		block: formatSkillsForPrompt(skills),
		templates: prompts.map((p) => ({ name: p.name, description: p.description, content: p.content, file: p.filePath, sourceInfo: p.sourceInfo })),
	}));
} else if (mode === "expand") {
	const { substituteArgs, parseCommandArgs, expandPromptTemplate } = await load("core/prompt-templates.js");
	console.log(JSON.stringify(input.map((c) => ({
		args: parseCommandArgs(c.args),
		out: substituteArgs(c.content, parseCommandArgs(c.args)),
		line: expandPromptTemplate("/t " + c.args, [{ name: "t", content: c.content }]),
	}))));
} else if (mode === "skillcmd") {
	const { AgentSession } = await load("core/agent-session.js");
	const rl = await loader(input.cwd, input.agentDir);
	const self = { resourceLoader: rl, _extensionRunner: { emitError() {} } };
	console.log(JSON.stringify(input.texts.map((t) => AgentSession.prototype._expandSkillCommand.call(self, t))));
} else {
	throw new Error("unknown mode " + mode);
}
