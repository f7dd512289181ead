// Command loadwrite is the floor bench/write.sh measures pi's write tool
// against: it reads a file of write-tool arguments, decodes them with
// encoding/json and writes the content as any atomic write must — a
// temporary file in the same folder, fsync, rename.
//
//	loadwrite ARGS.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "loadwrite:", err)
		os.Exit(1)
	}
}

func run(argsPath string) error {
	raw, err := os.ReadFile(argsPath)
	if err != nil {
		return err
	}
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(a.Path), ".loadwrite-*")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(a.Content); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), a.Path)
}
