// Stands in for the reference's src/core/session-manager.ts when the
// reference's tests run against pi: every call is done by pi's session store
// (runtime/session) through the driver. Nothing here keeps entries, walks the
// tree or builds a context itself; what pi has no counterpart for throws,
// saying so (see docs/reftests.md).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { call, missing, notApplicable } from "./driver.mjs";

export const CURRENT_SESSION_VERSION = 3;

/** The reference's context (pi's Session.ContextAt): the messages, the thinking level and the model. */
export function buildSessionContext(entries, leafId) {
	return call("context", { entries, hasLeaf: leafId !== undefined, leafId: leafId ?? null });
}

/** An entries array as pi reads it from a file (header first); [] where pi refuses the file. */
export function loadEntriesFromFile(filePath) {
	if (!existsSync(filePath)) return [];
	try {
		return call("read", { path: filePath });
	} catch {
		// pi refuses a file that is not a session (an error in Go, [] in the
		// reference's API).
		return [];
	}
}

export function parseSessionEntries(content) {
	return call("parse", { content });
}

/** Migrates in place, as the reference's does: pi migrates the lines of a version 1 or 2 file. */
export function migrateSessionEntries(entries) {
	const migrated = call("migrate", { entries });
	entries.splice(0, entries.length, ...migrated);
}

export function findMostRecentSession(sessionDir) {
	return call("most_recent", { dir: sessionDir }) || null;
}

export function getLatestCompactionEntry() {
	throw notApplicable("getLatestCompactionEntry", "a helper of the reference's context building; pi's is internal to session.BuildContext");
}

export class SessionManager {
	#h;
	#cwd;
	#dir;
	#persist;

	constructor(h, cwd, dir, persist) {
		this.#h = h;
		this.#cwd = cwd;
		this.#dir = dir;
		this.#persist = persist;
	}

	static create(cwd, sessionDir) {
		if (!sessionDir) throw notApplicable("SessionManager.create without a folder", "pi's default folder depends on PI_HOME, which the tests do not set");
		return new SessionManager(call("create", { cwd, dir: sessionDir }), cwd, sessionDir, true);
	}

	/** As pi's --session PATH: an existing file is opened, a missing one is created there. */
	static open(path, sessionDir) {
		const cwd = process.cwd();
		const h = existsSync(path) ? call("open", { path, cwd }) : call("create", { cwd, path });
		return new SessionManager(h, cwd, sessionDir ?? resolve(path, ".."), true);
	}

	static inMemory(cwd = process.cwd()) {
		return new SessionManager(call("create", { cwd, inMemory: true }), cwd, "", false);
	}

	static continueRecent() {
		throw notApplicable("SessionManager.continueRecent", "pi's -c is assembled in runtime/app from session.MostRecent (tested through findMostRecentSession)");
	}

	static forkFrom() {
		throw notApplicable("SessionManager.forkFrom", "pi's --fork is assembled in runtime/app");
	}

	static async list() {
		throw notApplicable("SessionManager.list", "pi's list is `pi sessions list --json`, with other fields");
	}

	static async listAll() {
		throw notApplicable("SessionManager.listAll", "pi's list is `pi sessions list --json`, with other fields");
	}

	newSession(options) {
		const where = this.#persist ? { dir: this.#dir } : { inMemory: true };
		const h = call("create", { cwd: this.#cwd, parentSession: options?.parentSession, id: options?.id, ...where });
		call("close", { h: this.#h });
		this.#h = h;
		return this.getSessionFile();
	}

	setSessionFile() {
		throw notApplicable("setSessionFile", "pi opens a file into a new Session (SessionManager.open)");
	}

	isPersisted() {
		return this.#persist;
	}
	getCwd() {
		return this.getHeader().cwd;
	}
	getSessionDir() {
		return this.#dir;
	}
	getSessionId() {
		return this.getHeader().id;
	}
	getSessionFile() {
		return call("path", { h: this.#h }) || undefined;
	}
	getHeader() {
		return call("header", { h: this.#h });
	}

	appendMessage(message) {
		return call("append_message", { h: this.#h, message });
	}
	appendThinkingLevelChange(thinkingLevel) {
		return call("append_thinking_level_change", { h: this.#h, thinkingLevel });
	}
	appendModelChange(provider, modelId) {
		return call("append_model_change", { h: this.#h, provider, modelId });
	}
	appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook) {
		if (fromHook) throw missing("appendCompaction(fromHook)", "pi writes no extension-made compactions");
		return call("append_compaction", { h: this.#h, summary, firstKeptEntryId, tokensBefore, details });
	}
	appendCustomEntry(customType, data) {
		return call("append_custom", { h: this.#h, customType, data: data ?? null });
	}
	appendSessionInfo(name) {
		return call("append_session_info", { h: this.#h, name });
	}
	getSessionName() {
		return call("name", { h: this.#h }) || undefined;
	}
	appendCustomMessageEntry() {
		throw missing("appendCustomMessageEntry", "pi reads custom_message entries but has no API to write one");
	}
	appendLabelChange(targetId, label) {
		return call("append_label", { h: this.#h, id: targetId, label: label ?? null });
	}
	getLabel(id) {
		return call("label", { h: this.#h, id }) ?? undefined;
	}

	getLeafId() {
		return call("leaf", { h: this.#h }) || null;
	}
	getLeafEntry() {
		const id = this.getLeafId();
		return id ? this.getEntry(id) : undefined;
	}
	getEntry(id) {
		return call("entry", { h: this.#h, id }) ?? undefined;
	}
	getEntries() {
		return call("entries", { h: this.#h });
	}
	getBranch(fromId) {
		return call("branch", { h: this.#h, leafId: fromId ?? null });
	}
	/** The entries whose parent is parentId, in file order (from pi's Entries). */
	getChildren(parentId) {
		return call("children", { h: this.#h, id: parentId });
	}
	/** pi's Session.Tree, in getTree's shape. */
	getTree() {
		return call("tree", { h: this.#h });
	}
	buildSessionContext() {
		return call("session_context", { h: this.#h });
	}

	branch(branchFromId) {
		call("set_leaf", { h: this.#h, leafId: branchFromId });
	}
	resetLeaf() {
		call("set_leaf", { h: this.#h, leafId: "" });
	}
	/** pi's Session.AppendBranchSummary. */
	branchWithSummary(branchFromId, summary, details, fromHook) {
		if (fromHook) throw missing("branchWithSummary(fromHook)", "pi writes no extension-made branch summaries");
		return call("branch_with_summary", { h: this.#h, leafId: branchFromId, summary, details });
	}

	/** pi's Session.ForkAt: a new session holding the path to leafId, which this manager goes on with. */
	createBranchedSession(leafId) {
		const h = call("fork_at", { h: this.#h, id: leafId, cwd: this.#cwd, inMemory: !this.#persist, dir: this.#dir });
		call("close", { h: this.#h });
		this.#h = h;
		return this.#persist ? this.getSessionFile() : undefined;
	}
}
