package extensions

import "errors"

// ErrSHA256Mismatch is wrapped by Load's error when the module file's
// sha256 is not the one its Spec pins: the file changed since it was
// installed (a rebuild, or tampering). runtime/app tells it from other
// load failures to disable only that extension, fail closed.
var ErrSHA256Mismatch = errors.New("sha256 mismatch")
