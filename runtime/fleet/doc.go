// Package fleet owns `pi fleet`: many agent runs spread over machines,
// on NATS JetStream (docs/fleet.md). Tasks go to a work-queue stream,
// their status to a key-value bucket, their results (patch, session, log)
// and workspace sources to an object store. A worker takes tasks with a
// pull consumer and runs each as a real pi run — a child process of the
// pi binary, in a temporary workspace of its own, with the worker's model
// configuration and key — and acknowledges a task only after its result
// is stored. Without a server URL it starts an embedded NATS server with
// JetStream on a local store.
//
// It is the only package that imports nats.go and nats-server.
package fleet
