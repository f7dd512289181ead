// Package serverproto is the protocol between runtime/fleet and
// cmd/pi-fleet-server, pi fleet's embedded NATS server run as a program
// of its own so that pi's binary does not link nats-server (linking it
// made pi's binary half as large again and every pi command's start-up
// slower; docs/performance.md). Only the pi that holds a fleet store's
// lock needs the server.
//
// On the program's standard input and output, one JSON object a line: pi
// writes a Config; the program starts the server on a random loopback
// port and writes a Ready with its client URL (or with Error, and exits
// 1); it serves until its standard input ends (pi closed it, or pi
// died), then shuts the server down and exits 0.
//
// Standard library only: pi links it.
package serverproto

// Version is the protocol's version; pi refuses a program that answers
// with another one.
const Version = 1

// Config is what pi sends: the store folder (the JetStream files go in
// its jetstream folder) and the token clients must present.
type Config struct {
	Store string `json:"store"`
	Token string `json:"token"`
}

// Ready is the program's answer: the protocol version, the client URL of
// the running server, or why it could not start.
type Ready struct {
	Protocol int    `json:"protocol"`
	URL      string `json:"url,omitempty"`
	Error    string `json:"error,omitempty"`
}
