// Command pi-fleet-server is pi fleet's embedded NATS server (nats-server
// with JetStream on a local store, loopback only, behind a token). The pi
// fleet command that holds a store's lock starts it — found by
// PI_FLEET_SERVER, next to pi's executable, or built once from pi's
// source into the user's cache — and talks to it on its standard input
// and output (runtime/fleet/serverproto). It is a program of its own so
// that pi's binary does not link nats-server (docs/fleet.md,
// docs/performance.md).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/pi-go/pi/runtime/fleet/serverproto"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: pi-fleet-server (started by pi fleet; it reads its configuration on standard input, docs/fleet.md)")
		return 2
	}
	if err := serve(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "pi-fleet-server: %v\n", err)
		return 1
	}
	return 0
}

// serve reads the configuration line from in, starts the server, writes
// the Ready line to out and serves until in ends. An error is written to
// out as Ready.Error too.
func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	ns, err := start(r)
	if err != nil {
		json.NewEncoder(out).Encode(serverproto.Ready{Protocol: serverproto.Version, Error: err.Error()})
		return err
	}
	if err := json.NewEncoder(out).Encode(serverproto.Ready{Protocol: serverproto.Version, URL: ns.ClientURL()}); err != nil {
		ns.Shutdown()
		return err
	}
	io.Copy(io.Discard, r) // until pi closes our standard input, or dies
	ns.Shutdown()
	ns.WaitForShutdown()
	return nil
}

func start(r *bufio.Reader) (*server.Server, error) {
	line, err := r.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("read the configuration line: %w", err)
	}
	var c serverproto.Config
	if err := json.Unmarshal(line, &c); err != nil {
		return nil, fmt.Errorf("configuration line: %w", err)
	}
	switch {
	case c.Store == "":
		return nil, errors.New(`configuration line: field "store" is missing`)
	case c.Token == "":
		return nil, errors.New(`configuration line: field "token" is missing`)
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "pi-fleet-embedded", Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: filepath.Join(c.Store, "jetstream"), Authorization: c.Token,
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("embedded NATS server: not ready after 30s")
	}
	return ns, nil
}
