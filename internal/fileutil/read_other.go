//go:build !unix

package fileutil

import (
	"io"
	"os"
)

// ReadAtMost reads the file name into buf (reused, grown as needed): the
// whole file when it has at most max bytes. Once more than max bytes were
// read it stops and returns what it read with the open file, to read the
// rest from (the caller closes it).
//
// # Errors
//
// ReadAtMost fails when the file cannot be opened or read.
func ReadAtMost(name string, buf []byte, max int64) (data []byte, rest *os.File, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	buf = buf[:0]
	for {
		if int64(len(buf)) > max {
			return buf, f, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	f.Close()
	return buf, nil, nil
}

// ReadWhole reads the file name whole into buf when it has at most max
// bytes; big reports a larger file. skip is given the first head bytes;
// when it returns true, skipped is true.
//
// # Errors
//
// ReadWhole fails when the file cannot be opened or read.
func ReadWhole(name string, buf []byte, max int64, head int, skip func([]byte) bool) (data []byte, big, skipped bool, err error) {
	data, rest, err := ReadAtMost(name, buf, max)
	if err != nil {
		return nil, false, false, err
	}
	if rest != nil {
		rest.Close()
		return nil, true, false, nil
	}
	if skip(data[:min(len(data), head)]) {
		return data, false, true, nil
	}
	return data, false, false, nil
}
