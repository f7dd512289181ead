package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-go/pi/runtime/config"
)

// Load lays the project pi.toml over the global one; a project's settings
// that run code wait for trust.
func ExampleLoad() {
	root, _ := os.MkdirTemp("", "pi-example-")
	defer os.RemoveAll(root)
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte(`
[model]
name = "gpt-4.1-mini"
[tools.bash]
shell = "/bin/bash"
`), 0o644)
	os.WriteFile(filepath.Join(proj, "pi.toml"), []byte(`
[tools]
active = ["read", "grep"]
[tools.bash]
command_prefix = "source .venv/bin/activate"
`), 0o644)

	c, err := config.Load(config.LoadOptions{Cwd: proj, PIHome: home})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model:", c.Model.Name)
	fmt.Println("active:", c.Tools.Active)
	fmt.Printf("bash: shell %q, prefix %q\n", c.Tools.Bash.Shell, c.Tools.Bash.CommandPrefix)
	fmt.Println("warnings:", len(c.Warnings))

	// After `pi trust` (config.Trust) the prefix applies.
	config.Trust(home, filepath.Join(proj, "pi.toml"))
	c, _ = config.Load(config.LoadOptions{Cwd: proj, PIHome: home})
	fmt.Printf("trusted: prefix %q, warnings %d\n", c.Tools.Bash.CommandPrefix, len(c.Warnings))
	// Output:
	// model: gpt-4.1-mini
	// active: [read grep]
	// bash: shell "/bin/bash", prefix ""
	// warnings: 1
	// trusted: prefix "source .venv/bin/activate", warnings 0
}

// Every problem is an *Error with the file, the line and the key.
func ExampleError() {
	dir, _ := os.MkdirTemp("", "pi-example-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(`[model]
name = "m"

[tools.bash]
promt = "x"
`), 0o644)

	_, err := config.Load(config.LoadOptions{Cwd: dir, PIHome: filepath.Join(dir, "home")})
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Printf("%s:%d: %s\n", filepath.Base(ce.File), ce.Line, ce.Msg)
		fmt.Println("key:", ce.Key)
	}
	// Output:
	// pi.toml:5: unknown key "tools.bash.promt" (known keys: command_prefix, shell, pass_env, full_output_max_mb, default_timeout)
	// key: tools.bash.promt
}

// AppendExtension writes a block that loads back; RemoveExtension takes it
// out again, leaving the rest of the file as it was.
func ExampleAppendExtension() {
	dir, _ := os.MkdirTemp("", "pi-example-")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "pi.toml")
	os.WriteFile(file, []byte("[model]\nname = \"m\"\n"), 0o644)

	err := config.AppendExtension(file, config.Extension{
		Name:   "loc",
		Path:   filepath.Join(dir, ".pi", "extensions", "loc.wasm"),
		SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Grants: config.Grants{FS: []string{"ro:."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(file)
	fmt.Print(string(data))

	config.RemoveExtension(file, "loc")
	data, _ = os.ReadFile(file)
	fmt.Printf("after remove: %q\n", data)
	// Output:
	// [model]
	// name = "m"
	//
	// [[extensions]]
	// name = "loc"
	// path = ".pi/extensions/loc.wasm"
	// sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	//
	// [extensions.grants]
	// fs = ["ro:."]
	// after remove: "[model]\nname = \"m\"\n"
}
