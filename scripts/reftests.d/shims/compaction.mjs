// Stands in for the reference's src/core/compaction/index.ts and utils.ts
// when its tests run against pi: pi's runtime/session compaction functions,
// through the driver.
import { call, missing, notApplicable } from "./driver.mjs";

let defaults;
const setting = (k) => (defaults ??= call("default_settings"))[k];

/** pi's session.DefaultCompactionSettings, read when first used. */
export const DEFAULT_COMPACTION_SETTINGS = {
	get enabled() {
		return setting("enabled");
	},
	get reserveTokens() {
		return setting("reserveTokens");
	},
	get keepRecentTokens() {
		return setting("keepRecentTokens");
	},
};

export function calculateContextTokens(usage) {
	return call("context_tokens", { usage });
}

export function shouldCompact(contextTokens, contextWindow, settings) {
	return call("should_compact", { tokens: contextTokens, contextWindow, settings });
}

export function findCutPoint(entries, startIndex, endIndex, keepRecentTokens) {
	return call("find_cut_point", { entries, start: startIndex, end: endIndex, keepRecent: keepRecentTokens });
}

export function serializeConversation(messages) {
	return call("serialize", { messages });
}

export function getLastAssistantUsage() {
	throw notApplicable("getLastAssistantUsage", "pi's contextTokens is internal to session.EstimateContextTokens and EstimateInfoTokens");
}

export function estimateTokens() {
	throw notApplicable("estimateTokens", "not mapped");
}

export function prepareCompaction() {
	throw notApplicable("prepareCompaction", "pi's session.Prepare takes the branch, not the reference's entries and settings");
}

export async function compact() {
	throw notApplicable("compact", "needs a model; pi's compaction is tested through RPC compact");
}

export async function generateSummary() {
	throw missing("generateSummary", "pi has no reasoning options for the summary call");
}
