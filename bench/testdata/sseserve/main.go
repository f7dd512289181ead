// Command sseserve is the model bench/loopwrite.sh's HTTP rows run pi
// against: a loopback OpenAI-wire server (the chunks of
// internal/testkit/openai) that answers a turn with tools and no tool
// result yet with a write call whose arguments are the file ARGS.json,
// streamed in 1000 chunks, and every other request (the turn after the
// tool result, a compaction's summary) with the text "done". It prints its
// base URL on the first line of its output and serves until it is killed.
//
//	sseserve ARGS.json
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/pi-go/pi/internal/testkit/openai"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "sseserve:", err)
		os.Exit(1)
	}
}

func run(argsPath string) error {
	args, err := os.ReadFile(argsPath)
	if err != nil {
		return err
	}
	call := openai.Chunks(openai.Reply{Chunks: 1000, ToolCalls: []openai.ToolCall{{Name: "write", Arguments: string(args)}}})
	done := openai.Chunks(openai.Reply{Text: "done"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		chunks := call
		for _, m := range body.Messages {
			if m.Role == "tool" {
				chunks = done
			}
		}
		if len(body.Tools) == 0 {
			chunks = done
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", c); err != nil {
				return
			}
		}
	}))
}
