package extspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFSGrant(t *testing.T) {
	tests := []struct {
		grant, root string
		want        FSGrant
		wantErr     string
	}{
		{grant: "ro:.", root: "/p", want: FSGrant{Path: "/p"}},
		{grant: "rw:src/../out", root: "/p", want: FSGrant{Writable: true, Path: "/p/out"}},
		{grant: "ro:/usr/share", root: "/p", want: FSGrant{Path: "/usr/share"}},
		{grant: "ro:../sibling", root: "/p/q", want: FSGrant{Path: "/p/sibling"}},
		{grant: "rx:.", root: "/p", wantErr: `parse fs grant "rx:.": want "ro:PATH" or "rw:PATH"`},
		{grant: "ro:", root: "/p", wantErr: `parse fs grant "ro:": empty PATH`},
		{grant: "ro:.", root: "rel", wantErr: `parse fs grant "ro:.": project root "rel" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.grant, func(t *testing.T) {
			got, err := ParseFSGrant(tt.grant, tt.root)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
			// Written back, it parses to the same grant.
			again, err := ParseFSGrant(got.String(), "/elsewhere")
			if err != nil || again != got {
				t.Errorf("%q parses to %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
}

func TestResolveFSGrant(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mustMkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustMkdir(filepath.Join(root, "docs"))
	mustMkdir(filepath.Join(root, "real"))
	if err := os.Symlink("real", filepath.Join(root, "inside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	realOutside, _ := filepath.EvalSymlinks(outside)
	tests := []struct {
		grant    string
		wantReal string
		wantErr  string
	}{
		{grant: "ro:.", wantReal: realRoot},
		{grant: "rw:docs", wantReal: filepath.Join(realRoot, "docs")},
		{grant: "ro:inside-link", wantReal: filepath.Join(realRoot, "real")},
		{grant: "ro:" + outside, wantReal: realOutside},
		{grant: "ro:escape", wantErr: "outside the project root"},
		{grant: "ro:..", wantErr: "outside the project root"},
		{grant: "ro:missing", wantErr: "no such file or directory"},
		{grant: "ro:file", wantErr: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.grant, func(t *testing.T) {
			got, err := ResolveFSGrant(tt.grant, root)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Real != tt.wantReal {
				t.Errorf("got %+v, %v; want Real %s", got, err, tt.wantReal)
			}
		})
	}
}
