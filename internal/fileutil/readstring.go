package fileutil

import (
	"io"
	"os"
	"strings"
)

// ReadString reads a whole file into a string, holding it once: the
// string is built in place (sized by one stat), not read into a byte slice
// and copied.
//
// # Errors
//
// ReadString fails as os.Open, Stat or Read fail.
func ReadString(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		b.Grow(int(fi.Size()) + 1)
	}
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
