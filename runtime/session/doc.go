// Package session stores conversations as sessions in the reference agent's
// own file format (pi-coding-agent, session format version 3), so a session
// started by pi can be resumed by the reference agent and the other way round.
//
// A session is one JSONL file: a header line
//
//	{"type":"session","version":3,"id":UUIDv7,"timestamp":ISO,"cwd":DIR[,"parentSession":FILE]}
//
// then one entry per line, each with "type", an 8-hex-digit "id", the
// "parentId" of the entry it follows (null for the first) and an ISO
// "timestamp". The entries form a tree; the current leaf is the last entry of
// the file, and the conversation sent to the model is the path from the root
// to the leaf (see Session.Context).
//
// Files live in DIR/--CWD--/TIMESTAMP_ID.jsonl, where DIR is
// $PI_HOME/sessions (see DefaultDir) and CWD is the working directory with
// its leading separator dropped and every separator turned into "-" (see
// DirFor). A new session's file is created when its first assistant message
// is appended; from then on every entry is appended with one write, and the
// file is never rewritten (except once, atomically, when an older format
// version is opened for writing and migrated).
//
// Reading tolerates a torn last line (a crash in the middle of a write): it
// is dropped with a warning and every earlier line is kept. Versions 1 and 2
// are migrated on read as the reference does; entry types this package does
// not know (from a newer version) are kept in the tree and skipped when
// building the context.
//
// A session opened for writing holds an exclusive advisory lock on its file
// (flock on Unix), so two pi processes never append to one file: the second
// gets ErrLocked, whose message suggests --fork.
//
// A compaction entry (AppendCompaction) replaces older messages by a
// summary in the context; package runtime/compaction decides where to cut
// and has the model write the summary. The token estimates of a context
// (EstimateTokens, EstimateContextTokens) are here, for it and for the
// front ends' context gauge.
package session
