package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/testkit/abigolden"
)

// run12Extension is an extension with every ABI 1.2 declaration of the
// running part: flags, a bus channel, a before_provider_request hook, and
// wants that ask for llm and model.
func run12Extension(got *[]string) *registry {
	r := &registry{}
	r.extension("r12", "1.0.0", "")
	r.wants = &Grants{FS: []string{"ro:."}, LLM: true, Model: true}
	r.addFlag(FlagSpec{Name: "loud", Boolean: true})
	r.addFlag(FlagSpec{Name: "who", Default: "world"})
	r.onBus("news", func(m BusMessage) { *got = append(*got, "bus "+m.From+" "+string(m.Data)) })
	r.run12.providerRequest = append(r.run12.providerRequest, func(p json.RawMessage) json.RawMessage {
		return json.RawMessage(strings.Replace(string(p), `"a":1`, `"a":2`, 1))
	})
	r.run12.timers = map[string]func(){"t1": func() { *got = append(*got, "timer t1") }}
	r.run12.watches = map[string]func([]string){"w1": func(p []string) { *got = append(*got, "watch "+strings.Join(p, ",")) }}
	return r
}

// A 1.2 guest on a 1.1 host: init's answer has none of 1.2's fields (a 1.1
// host decodes it strictly), flags answer their defaults without asking
// the host; on a 1.2 host they are all there.
func TestRun12Handshake(t *testing.T) {
	var got []string
	r := run12Extension(&got)
	init11 := `{"method":"init","params":{"abi":1,"abiMinor":1,"host":{"name":"pi","version":"0.9"},"cwd":"/p","config":{},"grants":{"fs":null,"exec":null,"env":null}}}`
	var resp abi.Response
	json.Unmarshal(r.handle([]byte(init11)), &resp)
	var v11 struct {
		Name, Version, Description string
		Tools                      []json.RawMessage
		Hooks                      []string
		Wants                      *struct{ FS, Exec, Env, HTTP, Tools []string }
		Commands                   []json.RawMessage
		ConfigSchema               json.RawMessage
		Events                     []string
	}
	if err := abi.DecodeStrict(resp.Result, &v11); err != nil {
		t.Fatalf("the answer to a 1.1 host has 1.2 fields: %s (%v)", resp.Result, err)
	}
	if len(v11.Hooks) != 0 {
		t.Errorf("hooks to a 1.1 host: %v", v11.Hooks)
	}
	r = run12Extension(&got)
	init12 := strings.Replace(init11, `"abiMinor":1`, `"abiMinor":2`, 1)
	json.Unmarshal(r.handle([]byte(init12)), &resp)
	var v12 abi.InitResult
	if err := abi.DecodeStrict(resp.Result, &v12); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v12.Flags)
	if string(b) != `[{"name":"loud","description":"","type":"boolean"},{"name":"who","description":"","type":"string","default":"world"}]` ||
		strings.Join(v12.Channels, ",") != "news" || strings.Join(v12.Hooks, ",") != "before_provider_request" || !v12.Wants.LLM || !v12.Wants.Model {
		t.Errorf("the answer to a 1.2 host: %s", resp.Result)
	}
}

// What the host sends a 1.2 guest reaches its handlers.
func TestRun12GuestMethods(t *testing.T) {
	var got []string
	r := run12Extension(&got)
	r.handle([]byte(`{"method":"init","params":{"abi":1,"abiMinor":2,"host":{"name":"pi","version":"0.9"},"cwd":"/p","config":{},"grants":{"fs":null,"exec":null,"env":null}}}`))
	for _, tc := range []struct{ req, want string }{
		{`{"method":"timer.fire","params":{"id":"t1"}}`, `{"ok":true,"result":{}}`},
		{`{"method":"timer.fire","params":{"id":"t9"}}`, `{"ok":false,"error":{"message":"no timer \"t9\""}}`},
		{`{"method":"watch.fire","params":{"id":"w1","paths":["/p/a","/p/b"]}}`, `{"ok":true,"result":{}}`},
		{`{"method":"bus.message","params":{"channel":"news","data":{"x":1},"from":"other"}}`, `{"ok":true,"result":{}}`},
		{`{"method":"hook.before_provider_request","params":{"payload":{"a":1,"stream":true}}}`, `{"ok":true,"result":{"payload":{"a":2,"stream":true}}}`},
	} {
		if out := string(r.handle([]byte(tc.req))); out != tc.want {
			t.Errorf("%s = %s, want %s", tc.req, out, tc.want)
		}
	}
	if strings.Join(got, "|") != `timer t1|watch /p/a,/p/b|bus other {"x":1}` {
		t.Errorf("handlers saw %q", got)
	}
}

// What the SDK's 1.2 host calls send is what the goldens hold.
func TestRun12GoldenHostCalls(t *testing.T) {
	enc := func(method string, params any) []byte {
		t.Helper()
		b, err := encodeHostRequest(method, params)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	abigolden.Match(t, "the SDK", "host.timer.set.request.json", enc(abi.HostMethodTimerSet, abi.TimerSetParams{MS: 500, Repeat: true}))
	abigolden.Match(t, "the SDK", "host.timer.clear.request.json", enc(abi.HostMethodTimerClear, abi.IDParams{ID: "t1"}))
	abigolden.Match(t, "the SDK", "host.watch.add.request.json", enc(abi.HostMethodWatchAdd, abi.WatchAddParams{Path: "src", Recursive: true}))
	abigolden.Match(t, "the SDK", "host.bus.emit.request.json", enc(abi.HostMethodBusEmit, abi.BusEmitParams{Channel: "plan:updated", Data: json.RawMessage(`{"step":3}`)}))
	abigolden.Match(t, "the SDK", "host.model.set.request.json", enc(abi.HostMethodModelSet, abi.ModelSetParams{Provider: "openai", ID: "gpt-4.1-mini"}))
	abigolden.Match(t, "the SDK", "host.model.setThinkingLevel.request.json", enc(abi.HostMethodModelSetThinkingLevel, abi.ThinkingLevelParams{Level: "xhigh"}))
	abigolden.Match(t, "the SDK", "host.tools.setActive.request.json", enc(abi.HostMethodToolsSetActive, abi.ToolNamesParams{Names: nonNil([]string{"read", "grep"})}))
}
