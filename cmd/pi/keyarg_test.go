package main

import (
	"slices"
	"strings"
	"testing"
)

// hideKeyArgs overwrites every --api-key value in the process's argv
// (each spelling the flag package accepts) and hands pi the value itself;
// nothing after "--" and no other flag is touched.
func TestHideKeyArgs(t *testing.T) {
	tests := []struct {
		args, want, shown string // space-separated
	}{
		{"-p hi --api-key sk-1234", "-p hi --api-key sk-1234", "-p hi --api-key *******"},
		{"--api-key=sk-1234 -p hi", "--api-key=sk-1234 -p hi", "--api-key=******* -p hi"},
		{"-api-key sk-1234", "-api-key sk-1234", "-api-key *******"},
		{"-api-key=sk-1234", "-api-key=sk-1234", "-api-key=*******"},
		{"rpc --model m --api-key k2 --api-key=k3", "rpc --model m --api-key k2 --api-key=k3", "rpc --model m --api-key ** --api-key=**"},
		{"--api-key= -p x", "--api-key= -p x", "--api-key= -p x"},
		{"-p --api-key", "-p --api-key", "-p --api-key"},
		{"--api-keys x --base-url u", "--api-keys x --base-url u", "--api-keys x --base-url u"},
		{"-p -- --api-key sk-1234", "-p -- --api-key sk-1234", "-p -- --api-key sk-1234"},
	}
	for _, tt := range tests {
		// The process's argv is writable memory; strings built at run time
		// stand in for it (literals are read-only).
		var argv []string
		for _, f := range strings.Fields(tt.args) {
			argv = append(argv, string([]byte(f)))
		}
		got := hideKeyArgs(argv)
		if !slices.Equal(got, strings.Fields(tt.want)) {
			t.Errorf("%q: pi got %q, want %q", tt.args, got, tt.want)
		}
		if shown := strings.Join(argv, " "); shown != tt.shown {
			t.Errorf("%q: the command line shows %q, want %q", tt.args, shown, tt.shown)
		}
	}
}
