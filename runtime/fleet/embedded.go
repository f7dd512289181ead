package fleet

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-go/pi/runtime/fleet/serverproto"
)

// ServerEnv names the pi-fleet-server program the embedded default runs,
// before the one next to pi's executable and the one built from pi's
// source.
const ServerEnv = "PI_FLEET_SERVER"

// serverProgram is the embedded server's program (cmd/pi-fleet-server).
const serverProgram = "pi-fleet-server"

// embeddedServer is a running pi-fleet-server, this process's child.
type embeddedServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	// exited is closed once the program has exited.
	exited chan struct{}
}

// startEmbedded runs the embedded server program on store and waits until
// it says where it listens.
func startEmbedded(store, token string, log io.Writer) (*embeddedServer, error) {
	prog, err := locateServer(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog)
	// Its own process group: a Ctrl-C at the terminal is pi's to handle
	// (drain the workers, then stop the server), not the server's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &capWriter{max: 4 << 10}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("embedded NATS server: start %s: %w", prog, err)
	}
	s := &embeddedServer{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	answer := make(chan []byte, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadBytes('\n')
		answer <- line
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(s.exited)
	}()
	b, _ := json.Marshal(serverproto.Config{Store: store, Token: token})
	stdin.Write(append(b, '\n'))
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	var line []byte
	select {
	case line = <-answer:
	case <-t.C:
		s.kill()
		return nil, fmt.Errorf("embedded NATS server %s: no answer after 60s", prog)
	}
	var r serverproto.Ready
	switch err := json.Unmarshal(line, &r); {
	case err != nil:
		s.kill()
		<-s.exited
		return nil, fmt.Errorf("embedded NATS server %s: %s", prog, orEmpty(stderr.String(), fmt.Sprintf("answered %q", bytes.TrimSpace(line))))
	case r.Protocol != serverproto.Version:
		s.kill()
		return nil, fmt.Errorf("embedded NATS server %s speaks protocol %d, this pi %d: rebuild it with this pi's source (go build ./cmd/pi-fleet-server)", prog, r.Protocol, serverproto.Version)
	case r.Error != "":
		s.kill()
		return nil, fmt.Errorf("embedded NATS server: %s", r.Error)
	}
	s.url = r.URL
	return s, nil
}

func orEmpty(s, alt string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return alt
}

func (s *embeddedServer) kill() {
	s.stdin.Close()
	s.cmd.Process.Kill()
}

// stop ends the server's input, so that it shuts down (its files flushed),
// and waits for it; a server that has not exited after 30 seconds is
// killed.
func (s *embeddedServer) stop() {
	s.stdin.Close()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-s.exited:
	case <-t.C:
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// capWriter keeps the first max bytes written to it.
type capWriter struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (w *capWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// locateServer finds the pi-fleet-server program: $PI_FLEET_SERVER, else
// next to pi's executable (go build -o DIR ./cmd/..., go install, the
// container image), else built from the source this pi was built from
// (go run ./cmd/pi, go build in a checkout) into the user's cache once per
// version of that source.
//
// # Errors
//
// PI_FLEET_SERVER names no program, or none is next to pi and pi's source
// is not on this machine (a -trimpath build) or does not build.
func locateServer(log io.Writer) (string, error) {
	if p := os.Getenv(ServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", ServerEnv, err)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), serverProgram)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	root, err := sourceRoot()
	if err != nil {
		return "", fmt.Errorf("the embedded NATS server needs the %s program next to pi (go build -o DIR ./cmd/pi ./cmd/%s, or go install github.com/pi-go/pi/cmd/%s), or give --nats URL: %w",
			serverProgram, serverProgram, serverProgram, err)
	}
	return buildServer(root, log)
}

// sourceRoot is the folder of the module this package was compiled from,
// when its files are on this machine (builds without -trimpath record
// their absolute paths).
func sourceRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("this pi was built without a record of its source folder (-trimpath)")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file))) // runtime/fleet/embedded.go
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module github.com/pi-go/pi\n")) {
		return "", fmt.Errorf("pi's source folder %s is not on this machine", root)
	}
	return root, nil
}

// serverSources are the files the program is built from, of pi's source
// (the modules' versions come with go.mod and go.sum).
var serverSources = []string{"go.mod", "go.sum", "cmd/pi-fleet-server", "runtime/fleet/serverproto"}

// buildServer builds cmd/pi-fleet-server from root into the user's cache,
// under a name that is a digest of its sources and the Go version, unless
// that file is there already.
func buildServer(root string, log io.Writer) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, s := range serverSources {
		p := filepath.Join(root, s)
		files := []string{p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.go"))
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("embedded NATS server: read its source: %w", err)
			}
			fmt.Fprintf(h, "%s %d\n", f[len(root):], len(b))
			h.Write(b)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "pi-go", serverProgram+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the embedded NATS server is built from pi's source in %s with the Go toolchain, which is not on PATH (or put %s next to pi, or give --nats URL)", root, serverProgram)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("embedded NATS server: %w", err)
	}
	if log != nil {
		fmt.Fprintf(log, "pi fleet: building the embedded NATS server (once) into %s\n", bin)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command(gobin, "build", "-o", tmp, "./cmd/"+serverProgram)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("embedded NATS server: go build ./cmd/%s in %s: %v\n%s", serverProgram, root, err, bytes.TrimSpace(out))
	}
	if err := os.Rename(tmp, bin); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("embedded NATS server: %w", err)
	}
	return bin, nil
}
