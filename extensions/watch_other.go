//go:build !linux

package extensions

import "errors"

// watchFS is Linux-only for now (inotify); elsewhere watch.add says so.
func watchFS(path string, recursive bool, changed func(string), failed func(error)) (func(), error) {
	return nil, errors.New("watches are not supported on this platform yet")
}
