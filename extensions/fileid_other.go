//go:build !unix

package extensions

import "errors"

// fileIdentity is unix-only; elsewhere every load is eager.
func fileIdentity(string) (string, error) {
	return "", errors.New("file identity is not available on this platform")
}
