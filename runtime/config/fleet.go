package config

import (
	"path/filepath"
	"strings"
)

// Fleet is [fleet]: where `pi fleet` finds its NATS server and how its
// workers run (docs/fleet.md). Zero values are unset (the fleet package's
// defaults apply). A project file sets it only when trusted: the server
// receives the project's files and prompts.
type Fleet struct {
	// NATS is the server URL list (nats://host:4222,nats://...); empty:
	// an embedded server on Store.
	NATS string
	// Creds, TLSCA, TLSCert and TLSKey are absolute paths ("~/" kept for
	// the caller to expand); relative ones were made absolute against
	// their file's folder.
	Creds, TLSCA, TLSCert, TLSKey string
	// Store is the embedded server's store folder.
	Store string
	// Concurrency is the runs one worker keeps going.
	Concurrency int
	// AckWaitS is the seconds a task may go without an in-progress ack
	// before it is delivered again.
	AckWaitS int
	// MaxAttempts is the deliveries of a task before it is failed.
	MaxAttempts int
	// Replicas of the streams and buckets (1, or 3 on a 3-node cluster).
	Replicas int
}

var fleetKeys = []string{"nats", "creds", "tls_ca", "tls_cert", "tls_key", "store", "concurrency", "ack_wait_s", "max_attempts", "replicas"}

// set reports whether the layer's [fleet] sets anything.
func (f *Fleet) set() bool { return *f != Fleet{} }

func (d *decoder) fleet(l *layer, v any) {
	m, ok := d.table("fleet", v, fleetKeys)
	if !ok {
		return
	}
	if v, ok := m["nats"]; ok {
		if s, ok := d.nonEmpty("fleet.nats", v); ok {
			l.fleet.NATS = s
		}
	}
	for key, dst := range map[string]*string{"creds": &l.fleet.Creds, "tls_ca": &l.fleet.TLSCA, "tls_cert": &l.fleet.TLSCert, "tls_key": &l.fleet.TLSKey, "store": &l.fleet.Store} {
		v, ok := m[key]
		if !ok {
			continue
		}
		s, ok := d.nonEmpty("fleet."+key, v)
		if !ok {
			continue
		}
		if strings.HasPrefix(s, "~") && s != "~" && !strings.HasPrefix(s, "~/") {
			d.errorf("fleet."+key, "key %q: %q: only ~/ (your home) is expanded", "fleet."+key, s)
			continue
		}
		if !strings.HasPrefix(s, "~") && !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(d.file), s)
		}
		*dst = s
	}
	for key, lim := range map[string]struct {
		dst   *int
		upper int
		unit  string
	}{
		"concurrency":  {&l.fleet.Concurrency, 1024, "runs"},
		"ack_wait_s":   {&l.fleet.AckWaitS, 3600, "seconds"},
		"max_attempts": {&l.fleet.MaxAttempts, 100, "deliveries"},
		"replicas":     {&l.fleet.Replicas, 5, "replicas"},
	} {
		if v, ok := m[key]; ok {
			if n, ok := d.positive("fleet."+key, v, lim.upper, lim.unit); ok {
				*lim.dst = n
			}
		}
	}
	if (l.fleet.TLSCert == "") != (l.fleet.TLSKey == "") {
		d.errorf("fleet", "keys %q and %q go together", "fleet.tls_cert", "fleet.tls_key")
	}
}

// applyFleet lays the layer's [fleet] over c: each key it sets replaces
// the value before.
func (l *layer) applyFleet(c *Config) {
	k := l.fleet
	for _, p := range [][2]*string{{&c.Fleet.NATS, &k.NATS}, {&c.Fleet.Creds, &k.Creds}, {&c.Fleet.TLSCA, &k.TLSCA}, {&c.Fleet.TLSCert, &k.TLSCert}, {&c.Fleet.TLSKey, &k.TLSKey}, {&c.Fleet.Store, &k.Store}} {
		if *p[1] != "" {
			*p[0] = *p[1]
		}
	}
	for _, p := range [][2]*int{{&c.Fleet.Concurrency, &k.Concurrency}, {&c.Fleet.AckWaitS, &k.AckWaitS}, {&c.Fleet.MaxAttempts, &k.MaxAttempts}, {&c.Fleet.Replicas, &k.Replicas}} {
		if *p[1] != 0 {
			*p[0] = *p[1]
		}
	}
}
