package extensions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchFS watches path (a file, or a folder and, when recursive, every
// folder beneath it, symlinks not followed) with inotify, calling changed
// with the absolute path of each created, written, removed or renamed
// entry. The inotify descriptor is read through Go's poller, so closing
// it (the returned func) ends the reader at once. golang.org/x/sys/unix
// is already a dependency; fsnotify is not, and a watch needs no more
// than these few calls.
func watchFS(path string, recursive bool, changed func(string), failed func(error)) (func(), error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	iw := &inotifyWatch{fd: fd, f: f, dirs: map[int32]string{}, recursive: recursive}
	info, err := os.Stat(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.IsDir() || !recursive {
		if err := iw.add(path); err != nil {
			f.Close()
			return nil, err
		}
	} else if err := iw.addTree(path); err != nil {
		f.Close()
		return nil, err
	}
	go iw.read(changed, failed)
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil
}

const inotifyMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_ATTRIB

type inotifyWatch struct {
	fd        int
	f         *os.File
	recursive bool
	mu        sync.Mutex
	dirs      map[int32]string // watch descriptor → path
}

func (iw *inotifyWatch) add(path string) error {
	wd, err := unix.InotifyAddWatch(iw.fd, path, inotifyMask|unix.IN_DONT_FOLLOW)
	if err != nil {
		return fmt.Errorf("inotify watch %s: %w", path, err)
	}
	iw.mu.Lock()
	iw.dirs[int32(wd)] = path
	iw.mu.Unlock()
	return nil
}

// addTree watches root and every folder beneath it (WalkDir does not
// follow symlinks, so a link out of the grant is never watched).
func (iw *inotifyWatch) addTree(root string) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // a folder that went away or cannot be read
		}
		if !d.IsDir() {
			return nil
		}
		if n++; n > maxWatchDirs {
			return fmt.Errorf("more than %d folders under %s; watch a smaller folder", maxWatchDirs, root)
		}
		return iw.add(p)
	})
}

// read turns inotify events into changed paths until the descriptor is
// closed.
func (iw *inotifyWatch) read(changed func(string), failed func(error)) {
	buf := make([]byte, 64*1024)
	for {
		n, err := iw.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				failed(err)
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameLen := int(ev.Len)
			end := off + unix.SizeofInotifyEvent + nameLen
			if end > n {
				break
			}
			name := ""
			if nameLen > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : end]
				for i, c := range raw {
					if c == 0 {
						raw = raw[:i]
						break
					}
				}
				name = string(raw)
			}
			off = end
			iw.mu.Lock()
			dir, ok := iw.dirs[ev.Wd]
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(iw.dirs, ev.Wd)
			}
			if ok && name == "" && ev.Mask&unix.IN_MOVE_SELF != 0 {
				// A watched folder moved (perhaps out of the grant): the
				// kernel would go on following it there, so stop; a
				// recursive watch picks it up again where it arrives
				// inside the watched tree (IN_MOVED_TO).
				delete(iw.dirs, ev.Wd)
				_, _ = unix.InotifyRmWatch(iw.fd, uint32(ev.Wd))
			}
			iw.mu.Unlock()
			if !ok || ev.Mask&unix.IN_IGNORED != 0 {
				continue
			}
			p := dir
			if name != "" {
				p = filepath.Join(dir, name)
			}
			changed(p)
			if iw.recursive && name != "" && ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
				_ = iw.addTree(p) // a new folder: follow it too
			}
		}
	}
}
