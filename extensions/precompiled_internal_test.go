package extensions

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// TestSLEB32: the signed LEB128 reader and writer agree, over the edges
// of each length, and the reader refuses what is not a 32-bit number.
func TestSLEB32(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 63, 64, -64, -65, 8191, 8192, -8192, -8193, 1 << 20, -(1 << 20), 1<<27 - 1, 1 << 27, math.MaxInt32, math.MinInt32} {
		b := appendSLEB32(nil, v)
		got, n := readSLEB32(b)
		if got != v || n != len(b) {
			t.Errorf("%d: encoded % x, read back %d (%d bytes)", v, b, got, n)
		}
	}
	for _, b := range [][]byte{nil, {0x80}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, {0xff, 0xff, 0xff, 0xff, 0x4f}} {
		if _, n := readSLEB32(b); n != 0 {
			t.Errorf("% x read as a number of %d bytes", b, n)
		}
	}
}

// TestMergeData: the merged section writes the same bytes to the memory
// as the original (checked by applying both to a zeroed memory), in fewer
// segments; sections it must not touch are refused.
func TestMergeData(t *testing.T) {
	seg := func(at int32, b ...byte) []byte {
		out := append([]byte{0, 0x41}, appendSLEB32(nil, at)...)
		out = append(out, 0x0b, byte(len(b)))
		return append(out, b...)
	}
	section := func(segs ...[]byte) []byte {
		out := []byte{byte(len(segs))}
		for _, s := range segs {
			out = append(out, s...)
		}
		return out
	}
	apply := func(t *testing.T, data []byte, size int) ([]byte, int) {
		mem := make([]byte, size)
		count, p := int(data[0]), 1
		for i := 0; i < count; i++ {
			at, k := readSLEB32(data[p+2:])
			p += 2 + k + 1
			n := int(data[p])
			p++
			copy(mem[uint32(at):], data[p:p+n])
			p += n
		}
		if p != len(data) {
			t.Fatalf("%d bytes after the segments", len(data)-p)
		}
		return mem, count
	}
	memory := []byte{1, 0, 1} // one memory, min 1 page
	data := section(seg(16, 1, 2, 3), seg(19, 4), seg(40, 5, 6), seg(40+2+mergeGap+1, 7), seg(60000, 8), seg(70, 9))
	section11, ok := appendMergedData(nil, data, memory)
	if !ok {
		t.Fatal("refused")
	}
	size, k := binary.Uvarint(section11[1:])
	if section11[0] != 11 || int(size) != len(section11)-1-k {
		t.Fatalf("section header % x for %d bytes", section11[:1+k], len(section11)-1-k)
	}
	merged := section11[1+k:]
	want, _ := apply(t, data, 65536)
	got, n := apply(t, merged, 65536)
	if !bytes.Equal(got, want) {
		t.Fatal("the merged section fills the memory differently")
	}
	if n != 4 { // 16..42 joined; 107 alone (gap mergeGap+1); 60000 alone; 70 goes backwards
		t.Fatalf("%d segments, want 4", n)
	}
	for name, c := range map[string]struct{ data, memory []byte }{
		"past the initial memory": {section(seg(65535, 1, 2)), memory},
		"passive segment":         {append([]byte{1, 1, 1}, 9), memory},
		"no memory section":       {section(seg(0, 1)), nil},
		"shared memory":           {section(seg(0, 1)), []byte{1, 3, 1, 1}},
		"imported memory":         {section(seg(0, 1)), nil},
		"offset not a constant":   {[]byte{1, 0, 0x23, 0, 0x0b, 1, 9}, memory},
		"trailing bytes":          {append(section(seg(0, 1)), 0), memory},
	} {
		if out, ok := appendMergedData([]byte{1, 2}, c.data, c.memory); ok || len(out) != 2 {
			t.Errorf("%s: merged", name)
		}
	}
}

// TestShellOf: a shell keeps every section but the code (and data, joined)
// and names its module's sha256; a module it cannot walk is refused.
func TestShellOf(t *testing.T) {
	// (module (func (result i32) i32.const 7) (export "f" (func 0)))
	mod := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x05\x01\x60\x00\x01\x7f" + // type
		"\x03\x02\x01\x00" + // function
		"\x07\x05\x01\x01f\x00\x00" + // export
		"\x0a\x06\x01\x04\x00\x41\x07\x0b") // code
	sum := sha256.Sum256(mod)
	shell, err := shellOf(mod, hex.EncodeToString(sum[:]), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), mod[:len(mod)-8]...)
	want = append(want, "\x0a\x05\x01\x03\x00\x00\x0b"...)
	want = append(want, 0, byte(1+len(shellSection)+32), byte(len(shellSection)))
	want = append(want, shellSection...)
	want = append(want, sum[:]...)
	if !bytes.Equal(shell, want) {
		t.Fatalf("shell\n% x\nwant\n% x", shell, want)
	}
	for name, bad := range map[string][]byte{
		"truncated section": mod[:len(mod)-1],
		"bad body size":     append(append([]byte(nil), mod[:len(mod)-5]...), 0x09, 0x00, 0x41, 0x07, 0x0b),
		"not wasm":          []byte("hello, world"),
	} {
		if _, err := shellOf(bad, hex.EncodeToString(sum[:]), nil); err == nil {
			t.Errorf("%s: a shell", name)
		}
	}
}
