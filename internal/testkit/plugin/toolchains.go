package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The Debian packages of each guest language's toolchain, as scripts/test
// installs them.
const (
	installWAT  = "apt-get install wabt"
	installC    = "apt-get install clang lld wasi-libc libclang-rt-dev-wasm32"
	installRust = "apt-get install rustc libstd-rust-dev-wasm32, or rustup target add wasm32-wasip1"
)

// Toolchain says whether the toolchain that builds a guest in lang ("go",
// "wat", "c" or "rust") is on this machine: "" when it is, else what is
// missing and how to install it, for the test to skip with. C is $CC (else
// clang) with wasi-libc (PI_TEST_CC_WASI=1 vouches for another libc);
// Rust is RustWasm's.
func Toolchain(lang string) string {
	switch lang {
	case "go":
		return ""
	case "wat":
		if _, err := exec.LookPath("wat2wasm"); err != nil {
			return "wat2wasm not found (" + installWAT + ")"
		}
		return ""
	case "c":
		cc := CC()
		if _, err := exec.LookPath(cc); err != nil {
			return cc + " not found (" + installC + ")"
		}
		if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil && os.Getenv("PI_TEST_CC_WASI") == "" {
			return "wasi-libc not found (" + installC + "; set PI_TEST_CC_WASI=1 to try your own)"
		}
		return ""
	case "rust":
		if _, _, ok := RustWasm(); !ok {
			return "no rustc with the wasm32-wasi standard library (" + installRust + ")"
		}
		return ""
	}
	return "no toolchain known for " + lang
}

// CC is the C compiler of C guests: $CC, else clang.
func CC() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "clang"
}

// RustWasm returns the first rustc ($RUSTC, rustc, /usr/bin/rustc) whose
// sysroot has the wasm32-wasip1 or the wasm32-wasi standard library, and
// that target, as the Rust scaffold's build.sh chooses them.
func RustWasm() (rustc, target string, ok bool) {
	for _, rc := range []string{os.Getenv("RUSTC"), "rustc", "/usr/bin/rustc"} {
		if rc == "" {
			continue
		}
		sysroot, err := exec.Command(rc, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		for _, target := range []string{"wasm32-wasip1", "wasm32-wasi"} {
			if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", target, "lib")); err == nil {
				return rc, target, true
			}
		}
	}
	return "", "", false
}
