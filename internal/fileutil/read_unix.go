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

// ReadWhole reads the file name whole into buf (reused, grown as needed)
// when it has at most max bytes; big reports a larger file, which is not
// read whole. The first head bytes are given to skip: when skip returns
// true (a binary file, for a searcher) the rest is not read and skipped is
// true. Bare descriptor and O_NONBLOCK as in ReadAtMost.
//
// # Errors
//
// ReadWhole fails when the file cannot be opened, examined or read.
func ReadWhole(name string, buf []byte, max int64, head int, skip func([]byte) bool) (data []byte, big, skipped bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, false, false, err
	}
	defer syscall.Close(fd)
	return ReadWholeFd(fd, buf, max, head, skip)
}

// ReadWholeFd is ReadWhole of a file already open as fd (the caller closes
// it). It sizes nothing with fstat while the file fits the buffer: a small
// file costs a read and the read that sees its end. Only a file that fills
// the first head bytes is fstat-ed, after skip saw them, to size the
// buffer once and to leave a file over maxSize unread.
//
// # Errors
//
// ReadWholeFd fails when the file cannot be examined or read.
func ReadWholeFd(fd int, buf []byte, maxSize int64, head int, skip func([]byte) bool) (data []byte, big, skipped bool, err error) {
	if cap(buf) < head+1 {
		buf = make([]byte, 0, max(head+1, 64<<10))
	}
	buf = buf[:0]
	checked := false
	for {
		if int64(len(buf)) > maxSize {
			return nil, true, false, nil // grew while read
		}
		end := cap(buf)
		if !checked {
			end = min(end, head)
		}
		if len(buf) == end {
			// Only a file of at least head bytes gets here unchecked.
			if !checked {
				checked = true
				if skip(buf[:head]) {
					return buf, false, true, nil
				}
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil {
					return nil, false, false, err
				}
				if st.Size > maxSize {
					return nil, true, false, nil
				}
				if want := int(st.Size) + 1; cap(buf) < want {
					buf = append(make([]byte, 0, want), buf...)
				}
			} else {
				buf = append(make([]byte, 0, 2*cap(buf)), buf...) // grew while read
			}
			continue
		}
		n, err := syscall.Read(fd, buf[len(buf):end])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, false, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if !checked && skip(buf) {
		return buf, false, true, nil
	}
	return buf, false, false, nil
}
