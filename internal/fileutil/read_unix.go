//go:build unix

package fileutil

import (
	"os"
	"syscall"
)

// ReadAtMost reads the file name into buf (reused, grown as needed): the
// whole file when it has at most max bytes. Once more than max bytes were
// read it stops and returns what it read with the open file, to read the
// rest from (the caller closes it).
//
// It uses a bare file descriptor: os.Open registers every file with the
// runtime poller, which costs a regular file several system calls; over a
// tree of 20k small files that halves the time spent opening and reading.
// O_NONBLOCK keeps a named pipe that replaced a file from blocking the open.
//
// # Errors
//
// ReadAtMost fails when the file cannot be opened or read.
func ReadAtMost(name string, buf []byte, max int64) (data []byte, rest *os.File, err error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	buf = buf[:0]
	for {
		if int64(len(buf)) > max {
			return buf, os.NewFile(uintptr(fd), name), nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return nil, nil, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	syscall.Close(fd)
	return buf, nil, nil
}
