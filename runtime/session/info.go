package session

import (
	"math"

	"github.com/pi-go/pi/runtime/llm"
)

// MessageInfo is what sums over a branch need of one context message: its
// role, its token estimate, its usage. An entry keeps it from its first
// decode on (Entry.Info), so the TUI's footer, the session's statistics
// and compaction's preparation decode a branch at most once, not once a
// turn each.
type MessageInfo struct {
	Role string
	// Tokens is EstimateTokens of the message.
	Tokens int
	// Usage is an assistant message's usage; nil when it has none. It is
	// shared: read only.
	Usage *Usage
	// Failed says an assistant message ended in an error or was aborted
	// (its usage does not count for the context's size).
	Failed bool
	// ToolCalls counts an assistant message's tool calls.
	ToolCalls int
}

// InfoOf is the MessageInfo of m.
func InfoOf(m *Message) MessageInfo {
	i := MessageInfo{Role: m.Role, Tokens: EstimateTokens(*m)}
	if m.Role == RoleAssistant {
		i.Usage = m.Usage
		i.Failed = m.StopReason == string(llm.StopError) || m.StopReason == string(llm.StopAborted)
		for _, b := range m.Content {
			if b.Type == "toolCall" {
				i.ToolCalls++
			}
		}
	}
	return i
}

// The packed form of an entry's MessageInfo (Entry.info): bits 0-3 the
// role's index in infoRoles (0: another role, read again when asked),
// then the flags, bits 8-31 the tool calls and 32-63 the tokens (each
// clamped; no real message comes near).
const (
	infoComputed uint64 = 1 << 4 // the info below is set
	infoOK       uint64 = 1 << 5 // the entry contributes a message
	infoFailed   uint64 = 1 << 6
	infoFast     uint64 = 1 << 7 // the line's message is read on decodeFast's path (valid JSON)
	infoCalls           = 8
	infoTokens          = 32
)

var infoRoles = [...]string{"", RoleUser, RoleAssistant, RoleToolResult, RoleCustom, RoleBashExecution, RoleBranchSummary, RoleCompactionSummary}

// packInfo packs i (see infoComputed).
func packInfo(i MessageInfo) uint64 {
	w := infoComputed | infoOK
	for k, r := range infoRoles[1:] {
		if i.Role == r {
			w |= uint64(k + 1)
			break
		}
	}
	if i.Failed {
		w |= infoFailed
	}
	w |= uint64(min(max(i.ToolCalls, 0), 1<<24-1)) << infoCalls
	w |= uint64(min(max(i.Tokens, 0), math.MaxUint32)) << infoTokens
	return w
}

// noteInfo keeps the info of m, e's message, unless e has it already;
// fast says m was read from e's line on decodeFast's path (so the next
// decode need not check the line's JSON again). Entries are shared
// between goroutines: every writer stores the same values, the usage
// before the word that says it is there.
func (e *Entry) noteInfo(m *Message, fast bool) {
	if e.info.Load()&infoComputed != 0 {
		return
	}
	i := InfoOf(m)
	w := packInfo(i)
	if fast {
		w |= infoFast
	}
	e.usage.Store(i.Usage)
	e.info.Store(w)
}

// Info returns what e adds to its branch's context, as InfoOf its
// ContextMessage: decoded once for a message entry (then kept with the
// entry), made for a custom_message or branch_summary entry. ok is false
// when ContextMessage's is.
func (e *Entry) Info() (MessageInfo, bool) {
	switch e.Type {
	case TypeMessage:
	case TypeCustomMessage, TypeBranchSummary:
		m, ok := e.ContextMessage()
		if !ok {
			return MessageInfo{}, false
		}
		return InfoOf(&m), true
	default:
		return MessageInfo{}, false
	}
	w := e.info.Load()
	if w&infoComputed == 0 {
		if _, err := e.Message(); err != nil {
			return MessageInfo{}, false
		}
		w = e.info.Load()
	}
	if w&infoOK == 0 {
		return MessageInfo{}, false
	}
	role := w & 0xf
	if role == 0 || role >= uint64(len(infoRoles)) {
		// A role this package does not know: read it again (rare).
		m, err := e.Message()
		if err != nil {
			return MessageInfo{}, false
		}
		return InfoOf(m), true
	}
	return MessageInfo{
		Role:      infoRoles[role],
		Tokens:    int(w >> infoTokens),
		Usage:     e.usage.Load(),
		Failed:    w&infoFailed != 0,
		ToolCalls: int(w >> infoCalls & (1<<24 - 1)),
	}, true
}

// ContextInfos is the MessageInfo of each message BuildContext(path)
// gives, in its order, without keeping the messages: what the footer's
// and statistics' sums and compaction's token counts need.
func ContextInfos(path []*Entry) []MessageInfo {
	comp, before, after := contextSpans(path)
	out := make([]MessageInfo, 0, len(before)+len(after)+1)
	if comp != nil {
		m := compactionSummary(comp)
		out = append(out, InfoOf(&m))
	}
	for _, span := range [2][]*Entry{before, after} {
		for _, e := range span {
			if i, ok := e.Info(); ok {
				out = append(out, i)
			}
		}
	}
	return out
}

// EstimateInfoTokens is EstimateContextTokens of the messages infos
// describe.
func EstimateInfoTokens(infos []MessageInfo) int {
	return contextTokens(len(infos), func(k int) *Usage {
		if i := infos[k]; i.Role == RoleAssistant && !i.Failed {
			return i.Usage
		}
		return nil
	}, func(k int) int { return infos[k].Tokens })
}

// SumUsage adds up the usage of the assistant messages infos describe;
// its TotalTokens is the sum of each one's ContextTokens.
func SumUsage(infos []MessageInfo) Usage {
	var t Usage
	for _, i := range infos {
		t.add(i)
	}
	return t
}

// TotalUsage is SumUsage of every message of the session, on every
// branch (what the session's answers used and cost).
func (s *Session) TotalUsage() Usage {
	var t Usage
	for _, e := range s.Entries() {
		if i, ok := e.Info(); ok {
			t.add(i)
		}
	}
	return t
}

// add adds i's usage to t when i is an assistant message with one.
func (t *Usage) add(i MessageInfo) {
	u := i.Usage
	if i.Role != RoleAssistant || u == nil {
		return
	}
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.TotalTokens += u.ContextTokens()
	t.Cost.Input += u.Cost.Input
	t.Cost.Output += u.Cost.Output
	t.Cost.CacheRead += u.Cost.CacheRead
	t.Cost.CacheWrite += u.Cost.CacheWrite
	t.Cost.Total += u.Cost.Total
}
