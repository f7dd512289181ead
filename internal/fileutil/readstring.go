package fileutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// ReadString reads a whole regular file into a string, holding it once:
// the string is built in place (sized by the open file's stat), not read
// into a byte slice and copied. The open does not block on a named pipe
// (O_NONBLOCK) and anything but a regular file is refused after it, so a
// file swapped for a FIFO or a device after the caller checked it cannot
// hang or feed the read.
//
// # Errors
//
// ReadString fails as open, stat or read fail, and with "read PATH: not a
// regular file" for anything else.
func ReadString(name string) (string, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read %s: not a regular file", name)
	}
	var b strings.Builder
	b.Grow(int(fi.Size()) + 1)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
}
