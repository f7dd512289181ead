//go:build !unix

package builtin

import (
	"io"
	"os"
)

// readSearchFile reads the file grep searches into buf (reused, grown as
// needed), up to max bytes. When the file is longer it returns the start read
// so far and the open file to read the rest from (the caller closes it).
//
// # Errors
//
// readSearchFile fails when the file cannot be opened or read.
func readSearchFile(name string, buf []byte, max int64) (data []byte, rest *os.File, err error) {
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
