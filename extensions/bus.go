package extensions

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pi-go/pi/internal/abi"
)

// The bus of ABI 1.2: bus.emit sends {channel, data} to every other
// loaded extension whose init lists the channel in channels, as
// bus.message calls, asynchronously and in order per receiver; never to
// the sender.

// Limits of the bus.
const (
	// MaxBusData is the largest bus.emit data.
	MaxBusData = 256 << 10
	// BusQueue is how many messages wait for one receiver; past it new
	// ones are dropped, with a warning.
	BusQueue = 256
)

// ValidChannel reports whether s is a bus channel: [a-z0-9:._-]{1,64}.
func ValidChannel(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// busQueue is a receiver's queue of messages, drained by one goroutine.
type busQueue struct {
	mu      sync.Mutex
	msgs    []abi.BusMessageParams
	running bool
	dropped int
}

// busEmit checks a bus.emit and queues it for every other extension
// listing the channel.
func (e *Extension) busEmit(p abi.BusEmitParams) error {
	if !ValidChannel(p.Channel) {
		return fmt.Errorf("bus.emit: channel %q must match [a-z0-9:._-]{1,64}", p.Channel)
	}
	if len(p.Data) > MaxBusData {
		e.logger.Warn("bus.emit refused: data too large", "channel", p.Channel, "bytes", len(p.Data))
		return fmt.Errorf("bus.emit: data is %d bytes, over the %d KiB limit", len(p.Data), MaxBusData>>10)
	}
	data := p.Data
	if isNull(data) {
		data = json.RawMessage("null")
	}
	msg := abi.BusMessageParams{Channel: p.Channel, Data: append(json.RawMessage(nil), data...), From: e.name}
	for _, o := range e.host.Extensions() {
		if o == e {
			continue
		}
		for _, c := range o.channels {
			if c == p.Channel {
				o.deliver(msg)
				break
			}
		}
	}
	return nil
}

// deliver queues msg for e and starts the drain when it is not running.
func (e *Extension) deliver(msg abi.BusMessageParams) {
	e.runMu.Lock()
	if e.bus == nil {
		e.bus = &busQueue{}
	}
	q := e.bus
	e.runMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) >= BusQueue {
		q.dropped++
		if q.dropped == 1 || q.dropped%100 == 0 {
			e.logger.Warn("bus: messages dropped: the extension's queue is full", "channel", msg.Channel, "from", msg.From, "queue", BusQueue, "dropped", q.dropped)
		}
		return
	}
	q.msgs = append(q.msgs, msg)
	if !q.running {
		q.running = true
		go e.drainBus(q)
	}
}

// drainBus sends the queued messages one by one, in order.
func (e *Extension) drainBus(q *busQueue) {
	ctx := e.host.runContext()
	for {
		q.mu.Lock()
		if len(q.msgs) == 0 || ctx.Err() != nil {
			q.running = false
			q.msgs = nil
			q.mu.Unlock()
			return
		}
		msg := q.msgs[0]
		q.msgs = q.msgs[1:]
		q.mu.Unlock()
		e.guestCallAsync(ctx, abi.MethodBusMessage, msg, nil)
	}
}
