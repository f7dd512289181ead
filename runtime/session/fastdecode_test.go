package session

import (
	"reflect"
	"testing"
)

// decodeSeeds are message shapes pi and the reference write, and the
// corners where decodeFast must leave the message to encoding/json.
var decodeSeeds = []string{
	`{"role":"user","content":"hello","timestamp":1700000000000}`,
	`{"role":"user","content":[{"type":"text","text":"héllo \u00e9 \"q\""},{"type":"image","data":"AAAA","mimeType":"image/png"}],"timestamp":1.7e12}`,
	`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig","redacted":true},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"},"thoughtSignature":"t"}],"api":"openai-completions","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"stopReason":"toolUse","timestamp":1}`,
	`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"diff":"-a\n+b"},"isError":false,"timestamp":2}`,
	`{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/o","excludeFromContext":true,"timestamp":3}`,
	`{"role":"bashExecution","command":"ls","output":"","exitCode":null,"cancelled":true,"timestamp":3}`,
	`{"role":"custom","customType":"note","content":"x","display":true,"details":null,"timestamp":4}`,
	`{"role":"compactionSummary","summary":"s","tokensBefore":123,"timestamp":5}`,
	`{"role":"branchSummary","summary":"s","fromId":"abc","timestamp":6}`,
	`{"role":"user","content":[],"timestamp":7}`,
	`{"role":"user","content":null,"usage":null,"timestamp":null}`,
	`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":null}]}`,
	`{"role":"assistant","usage":{"input":1,"cost":null,"totalTokens":null},"timestamp":1}`,
	`{"Role":"user","content":"x"}`,
	`{"role":"assistant","usage":{"input":1.5}}`,
	`{"role":"assistant","usage":{"Input":1}}`,
	`{"role":"assistant","usage":{"input":1,"input":2}}`,
	`{"role":"assistant","usage":{"cost":{"total":"1"}}}`,
	`{"role":"assistant","usage":[]}`,
	`{"role":"user","role":"assistant"}`,
	`{"role":"user","content":[null]}`,
	`{"role":"user","content":5}`,
	`{"role":1}`,
	`{"role":"user","timestamp":"5"}`,
	`{"role":"user","exitCode":1.5}`,
	`{"role":"user","content":"\xff"}`,
	`{"r\u006fle":"user"}`,
	`{"role":"user","content":[{"type":"text","Text":"x"}]}`,
	`{"role":"user","content":[{"type":"text","text":"x","text":"y"}]}`,
	`{"role":"user","extra":{"a":[1,2,{"b":null}]},"timestamp":1e400}`,
	`{"role":"user"`,
	`[]`,
	`null`,
	`{}`,
	`{"role":"user","content":"x"} `,
}

// FuzzDecodeFast holds decodeFast to encoding/json: whatever it reads, it
// reads as decodeSlow does.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast Message
		if !fast.decodeFast(b, false) {
			if !reflect.DeepEqual(fast, Message{}) {
				t.Fatalf("decodeFast left %q half read: %#v", b, fast)
			}
			return
		}
		fast.raw = b[:len(b):len(b)]
		var slow Message
		if err := slow.decodeSlow(b); err != nil {
			t.Fatalf("decodeFast read %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", b, fast, slow)
		}
	})
}

// TestDecodeFastReads checks that the shapes pi writes take the fast path
// (else the fuzz target above would hold nothing).
func TestDecodeFastReads(t *testing.T) {
	for _, s := range decodeSeeds[:13] {
		var m Message
		if !m.decodeFast([]byte(s), false) {
			t.Errorf("decodeFast left %s to encoding/json", s)
		}
	}
}
