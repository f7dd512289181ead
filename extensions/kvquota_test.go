//go:build unix

package extensions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// kvGuest loads the raw ABI 1.1 guest (its tool "seq" sends a list of host
// calls and answers each answer on a line) with a kv folder, under name.
func kvGuest(t testing.TB, h *extensions.Host, spec extensions.Spec) []tool.AgentTool {
	t.Helper()
	spec.Path = goGuest(t, "extensions/testdata/guests/raw11")
	if spec.Config == nil {
		spec.Config = map[string]any{"name": "flood"}
	}
	return tools(t, load(t, h, spec))
}

// seqSets has the guest send kv.set for keys prefix0..prefixN-1 (value 1)
// in one tool call and returns the answers.
func seqSets(t testing.TB, ts []tool.AgentTool, prefix string, from, n int) []string {
	t.Helper()
	calls := make([]any, 0, n)
	for i := from; i < from+n; i++ {
		calls = append(calls, map[string]any{"method": "kv.set", "params": map[string]any{"key": fmt.Sprintf("%s%d", prefix, i), "value": 1}})
	}
	in, _ := json.Marshal(map[string]any{"calls": calls})
	res := run(context.Background(), ts, nil, "seq", string(in))
	if res.IsError {
		t.Fatalf("seq: %s", res.Text())
	}
	return strings.Split(res.Text(), "\n")
}

// diskUsage is what the files under dir take on disk (st_blocks×512) and
// how many there are.
func diskUsage(t testing.TB, dir string) (bytes int64, files int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				bytes += st.Blocks * 512
			}
			files++
		}
		return nil
	})
	return bytes, files
}

// TestKVFloodOfTinyKeysStopsAtTheDiskQuota: a guest that sets key after
// tiny key (the attack that made 1,444 keys "of 7.5 KB" take 5.9 MiB) is
// stopped when the blocks its files hold reach kv_mb, and the folder on
// disk stays within the quota (plus one entry).
func TestKVFloodOfTinyKeysStopsAtTheDiskQuota(t *testing.T) {
	kv := t.TempDir()
	h := newHost(t, extensions.Options{KVDir: kv, ProjectRoot: t.TempDir()})
	ts := kvGuest(t, h, extensions.Spec{Limits: extensions.Limits{KVMB: 1}})
	const quota = 1 << 20
	stored := 0
	for batch := 0; batch < 10 && stored == batch*100; batch++ {
		for _, a := range seqSets(t, ts, "k", batch*100, 100) {
			if a == `{"ok":true,"result":{}}` {
				stored++
				continue
			}
			if !strings.Contains(a, "kv quota exceeded (") || !strings.Contains(a, "of 1048576 bytes on disk)") {
				t.Fatalf("key %d: %s", stored, a)
			}
		}
	}
	if most := quota / (4096 + 512); stored > most || stored < most/2 {
		t.Errorf("%d tiny keys stored under a 1 MiB quota; want at most %d (a 4 KiB block and an inode each)", stored, most)
	}
	used, files := diskUsage(t, kv)
	if used > quota+8192 {
		t.Errorf("the flood took %d bytes on disk (%d files), over the %d-byte quota", used, files, quota)
	}
	t.Logf("%d keys stored, %d bytes on disk in %d files", stored, used, files)
}

// TestKVEntryCapStopsAFlood: however big kv_mb, a store holds at most the
// entry cap (lowered here from 10,000 to 50): the next new key is refused,
// replacing a key still works, and a delete makes room for one.
func TestKVEntryCapStopsAFlood(t *testing.T) {
	defer extensions.SetMaxKVEntries(50)()
	kv := t.TempDir()
	h := newHost(t, extensions.Options{KVDir: kv, ProjectRoot: t.TempDir()})
	ts := kvGuest(t, h, extensions.Spec{Limits: extensions.Limits{KVMB: 1024}})
	answers := seqSets(t, ts, "k", 0, 60)
	for i, a := range answers {
		want := `{"ok":true,"result":{}}`
		if i >= 50 {
			want = `{"ok":false,"error":{"message":"kv store full (50 keys, the most a store holds; delete some)"}}`
		}
		if a != want {
			t.Fatalf("key %d = %s, want %s", i, a, want)
		}
	}
	if _, files := diskUsage(t, kv); files > 50+2 { // and ROOT, USAGE
		t.Errorf("%d files for a 50-key cap", files)
	}
	if a := seqSets(t, ts, "k", 0, 1); a[0] != `{"ok":true,"result":{}}` {
		t.Errorf("replacing a key of a full store = %s", a[0])
	}
	in := `{"calls":[{"method":"kv.delete","params":{"key":"k0"}},{"method":"kv.set","params":{"key":"new","value":1}},{"method":"kv.set","params":{"key":"new2","value":1}}]}`
	got := run(context.Background(), ts, nil, "seq", in).Text()
	if got != "{\"ok\":true,\"result\":{}}\n{\"ok\":true,\"result\":{}}\n{\"ok\":false,\"error\":{\"message\":\"kv store full (50 keys, the most a store holds; delete some)\"}}" {
		t.Errorf("delete, then two new keys = %s", got)
	}
}

// TestKVTwoHostsShareOneTally: two hosts (as two pi processes would, each
// opening the store's USAGE file and taking its flock) flood one store at
// once; together they stay within the entry cap, and the tally each reads
// is the other's too.
func TestKVTwoHostsShareOneTally(t *testing.T) {
	defer extensions.SetMaxKVEntries(40)()
	kv, root := t.TempDir(), t.TempDir()
	var tss [2][]tool.AgentTool
	for i := range tss {
		h := newHost(t, extensions.Options{KVDir: kv, ProjectRoot: root})
		tss[i] = kvGuest(t, h, extensions.Spec{Limits: extensions.Limits{KVMB: 1024}})
	}
	var wg sync.WaitGroup
	var stored [2]int
	for i := range tss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, a := range seqSets(t, tss[i], fmt.Sprintf("h%d-", i), 0, 30) {
				if a == `{"ok":true,"result":{}}` {
					stored[i]++
				}
			}
		}()
	}
	wg.Wait()
	if n := stored[0] + stored[1]; n != 40 {
		t.Errorf("two hosts stored %d + %d keys under a cap of 40", stored[0], stored[1])
	}
	if _, files := diskUsage(t, kv); files != 40+2 {
		t.Errorf("%d files on disk for 40 keys (and ROOT, USAGE)", files)
	}
}

// TestKVSetDoesNotListTheStore: after the first set of the process (which
// counts the store once), sets and deletes keep the tally without listing
// the folder.
func TestKVSetDoesNotListTheStore(t *testing.T) {
	h := newHost(t, extensions.Options{KVDir: t.TempDir(), ProjectRoot: t.TempDir()})
	ts := kvGuest(t, h, extensions.Spec{})
	seqSets(t, ts, "k", 0, 1)
	before := extensions.KVListings()
	seqSets(t, ts, "k", 1, 100)
	run(context.Background(), ts, nil, "seq", `{"calls":[{"method":"kv.delete","params":{"key":"k5"}},{"method":"kv.set","params":{"key":"k5","value":null}}]}`)
	if n := extensions.KVListings() - before; n != 0 {
		t.Errorf("100 sets and 2 deletes listed the store %d times", n)
	}
}

// BenchmarkKVSet is one kv.set through the raw guest into a store that
// holds 10 or 5000 keys: the time does not grow with the store (a set
// stats the entry and reads the tally; it never lists the folder).
func BenchmarkKVSet(b *testing.B) {
	defer extensions.SetMaxKVEntries(1 << 20)()
	for _, n := range []int{10, 5000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			h := newHost(b, extensions.Options{KVDir: b.TempDir(), ProjectRoot: b.TempDir()})
			ts := kvGuest(b, h, extensions.Spec{Limits: extensions.Limits{KVMB: 1024}})
			for i := 0; i < n; i += 500 {
				seqSets(b, ts, "fill", i, min(500, n-i))
			}
			in := `{"calls":[{"method":"kv.set","params":{"key":"hot","value":1}}]}`
			b.ResetTimer()
			for range b.N {
				if r := run(context.Background(), ts, nil, "seq", in); r.Text() != `{"ok":true,"result":{}}` {
					b.Fatal(r.Text())
				}
			}
		})
	}
}
