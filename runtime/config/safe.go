package config

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrUnsafeFile is matched (errors.Is) by the error of Load, Trust,
// IsTrusted and the other readers when a pi.toml or trust.json could have
// been written by someone other than the current user or root: it is owned
// by another user, or writable by other users (see checkFileSafe for the
// exact rule). The error's text says which and what to do.
var ErrUnsafeFile = errors.New("config file others can change")

// unsafeFileError is an ErrUnsafeFile with its explanation.
type unsafeFileError struct{ msg string }

func (e *unsafeFileError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrUnsafeFile) hold.
func (e *unsafeFileError) Is(target error) bool { return target == ErrUnsafeFile }

// readSafe reads file after checking, on the open file itself (so a swap
// between check and read is not possible), that only the current user or
// root can change it. what names the file in messages ("config file",
// "trust store"). A missing file is an error wrapping os.ErrNotExist.
func readSafe(file, what string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", file)
	}
	if err := checkFileSafe(file, what, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// ReadSafeFile reads a file pi takes instructions from (a context file such
// as AGENTS.md) by the rule of pi.toml: it is refused (ErrUnsafeFile, with
// what to do) unless only the current user or root can change it, checked on
// the open file. what names the file in messages.
func ReadSafeFile(file, what string) ([]byte, error) {
	return readSafe(file, what)
}
