// vitest globalSetup for the pi run: a loopback OpenAI-compatible chat
// completions server, the model pi talks to in rpc.test.ts (which asks the
// reference to talk to Anthropic). It is an echo model: each answer is the
// text of every user message of the request, so an answer holds what pi put
// into the context (a prompt's "test123", the output of a bash command the
// client ran) and nothing else.
import { createServer } from "node:http";

function texts(content) {
	if (typeof content === "string") return [content];
	if (!Array.isArray(content)) return [];
	return content.filter((p) => p?.type === "text").map((p) => p.text);
}

export default async function setup() {
	const server = createServer((req, res) => {
		let body = "";
		req.on("data", (d) => {
			body += d;
		});
		req.on("end", () => {
			let parsed;
			try {
				parsed = JSON.parse(body);
			} catch {
				res.writeHead(400).end('{"error":{"message":"bad json"}}');
				return;
			}
			if (!req.url.endsWith("/chat/completions")) {
				res.writeHead(404).end('{"error":{"message":"not found"}}');
				return;
			}
			const user = (parsed.messages ?? []).filter((m) => m.role === "user").flatMap((m) => texts(m.content));
			const answer = `echo: ${user.join("\n")}`;
			const chunk = (delta, finish, usage) =>
				`data: ${JSON.stringify({ id: "echo", object: "chat.completion.chunk", created: 0, model: parsed.model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
			const prompt = Math.ceil(body.length / 4);
			const completion = Math.ceil(answer.length / 4);
			res.writeHead(200, { "content-type": "text/event-stream" });
			res.write(chunk({ role: "assistant", content: answer }, null));
			res.write(chunk({}, "stop", { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }));
			res.end("data: [DONE]\n\n");
		});
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	process.env.REFTESTS_BASE_URL = `http://127.0.0.1:${server.address().port}/v1`;
	return () => new Promise((r) => server.close(r));
}
