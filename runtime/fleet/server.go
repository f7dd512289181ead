package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/pi-go/pi/internal/atomicfile"
)

// Names of what the fleet keeps in JetStream.
const (
	TaskStream  = "PI_FLEET_TASKS"
	TaskSubject = "pi.fleet.tasks"
	Consumer    = "pi-fleet-workers"
	StatusKV    = "pi_fleet"
	ObjectStore = "pi_fleet_objects"
)

// Options say how to reach the server and how the queue behaves.
type Options struct {
	// URL is the NATS server (a comma-separated list for a cluster);
	// empty: an embedded server on Store.
	URL string
	// Creds is a NATS credentials file; TLSCA, TLSCert and TLSKey the
	// TLS files.
	Creds, TLSCA, TLSCert, TLSKey string
	// Store is the embedded server's folder.
	Store string
	// AckWait is how long a task may go without an in-progress ack before
	// it is delivered again (default 30s).
	AckWait time.Duration
	// MaxAttempts is the deliveries of a task before it is failed
	// (default 3).
	MaxAttempts int
	// Replicas of the stream and buckets when this pi makes them (default
	// 3 on a cluster of three or more servers, else 1).
	Replicas int
	// Name tells the server who connects.
	Name string
}

func (o *Options) defaults() {
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
}

// Fleet is a connection to the fleet's stream, bucket and object store.
type Fleet struct {
	opts Options
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	obs  jetstream.ObjectStore
	// embedded is the server this process started, nil when it uses
	// another one.
	embedded *server.Server
	lock     *os.File
	// Embedded says this process runs the embedded server (so it also
	// runs the local workers of submit --wait).
	Embedded bool
}

// serverFile is where the embedded server's address and token are kept,
// readable by the user only.
type serverFile struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// Open connects to the fleet: to Options.URL, or to the embedded server
// on Options.Store (started by this process when no other pi runs it),
// and makes the stream, consumer, bucket and object store when missing.
//
// # Errors
//
// The server cannot be reached or started, or JetStream refuses the
// stream or buckets.
func Open(ctx context.Context, o Options) (*Fleet, error) {
	o.defaults()
	f := &Fleet{opts: o}
	url, copts, err := f.endpoint()
	if err != nil {
		f.Close()
		return nil, err
	}
	copts = append(copts, nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond), nats.RetryOnFailedConnect(false))
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("connect to NATS %s: %w", redactURL(url), err)
	}
	f.nc = nc
	if f.opts.Replicas <= 0 {
		// On a cluster of three or more, three replicas: the queue
		// survives a node.
		f.opts.Replicas = 1
		if nc.ConnectedClusterName() != "" && len(nc.Servers()) >= 3 {
			f.opts.Replicas = 3
		}
	}
	if f.js, err = jetstream.New(nc); err != nil {
		f.Close()
		return nil, err
	}
	if err := retry(ctx, 30*time.Second, f.setup); err != nil {
		f.Close()
		return nil, fmt.Errorf("set up the fleet's JetStream stream and buckets: %w", err)
	}
	return f, nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}

// endpoint is the URL and options to connect with, starting the embedded
// server when it is to be used and nobody runs it.
func (f *Fleet) endpoint() (string, []nats.Option, error) {
	o := f.opts
	if o.URL != "" {
		var opts []nats.Option
		if o.Creds != "" {
			opts = append(opts, nats.UserCredentials(o.Creds))
		}
		if o.TLSCA != "" {
			opts = append(opts, nats.RootCAs(o.TLSCA))
		}
		if o.TLSCert != "" {
			opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
		}
		return o.URL, opts, nil
	}
	if o.Store == "" {
		return "", nil, errors.New("no NATS server: give --nats URL or [fleet] nats, or a store folder for the embedded server")
	}
	if err := os.MkdirAll(o.Store, 0o700); err != nil {
		return "", nil, fmt.Errorf("fleet store: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(o.Store, "server.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("fleet store: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// Another pi runs the embedded server: use it.
		lock.Close()
		sf, err := readServerFile(o.Store)
		if err != nil {
			return "", nil, err
		}
		return sf.URL, []nats.Option{nats.Token(sf.Token)}, nil
	}
	f.lock = lock
	token, err := randomHex(24)
	if err != nil {
		return "", nil, err
	}
	sopts := &server.Options{
		ServerName: "pi-fleet-embedded", Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: filepath.Join(o.Store, "jetstream"), Authorization: token,
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20,
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return "", nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return "", nil, errors.New("embedded NATS server: not ready after 30s")
	}
	f.embedded, f.Embedded = ns, true
	sf := serverFile{URL: ns.ClientURL(), Token: token, PID: os.Getpid()}
	b, _ := json.Marshal(sf)
	if err := atomicfile.WriteFile(filepath.Join(o.Store, "server.json"), b, 0o600); err != nil {
		return "", nil, err
	}
	return sf.URL, []nats.Option{nats.Token(token)}, nil
}

// readServerFile reads the running embedded server's address; the pi
// that holds the lock writes it just after it starts the server.
func readServerFile(store string) (serverFile, error) {
	var sf serverFile
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(store, "server.json"))
		if err == nil && json.Unmarshal(b, &sf) == nil && sf.URL != "" && processAlive(sf.PID) {
			return sf, nil
		}
		if time.Now().After(deadline) {
			return sf, fmt.Errorf("the embedded NATS server of %s is locked by another pi but did not say where it listens", store)
		}
		// The other pi is between taking the lock and writing the file.
		time.Sleep(50 * time.Millisecond)
	}
}

func processAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// setup makes the stream, bucket and object store when missing. What
// exists is used as it is: the first pi to make them decides their
// replicas (a later one with other settings must not flap them; change
// them with the nats CLI).
func (f *Fleet) setup(ctx context.Context) error {
	o := f.opts
	if _, err := f.js.Stream(ctx, TaskStream); errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = f.js.CreateStream(ctx, jetstream.StreamConfig{
			Name: TaskStream, Subjects: []string{TaskSubject}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Replicas: o.Replicas, Duplicates: 10 * time.Minute,
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("stream %s: %w", TaskStream, err)
		}
	} else if err != nil {
		return fmt.Errorf("stream %s: %w", TaskStream, err)
	}
	var err error
	if f.kv, err = f.js.KeyValue(ctx, StatusKV); errors.Is(err, jetstream.ErrBucketNotFound) {
		f.kv, err = f.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: StatusKV, History: 1, Storage: jetstream.FileStorage, Replicas: o.Replicas})
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			f.kv, err = f.js.KeyValue(ctx, StatusKV)
		}
	}
	if err != nil {
		return fmt.Errorf("bucket %s: %w", StatusKV, err)
	}
	if f.obs, err = f.js.ObjectStore(ctx, ObjectStore); errors.Is(err, jetstream.ErrBucketNotFound) {
		f.obs, err = f.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: ObjectStore, Storage: jetstream.FileStorage, Replicas: o.Replicas})
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			f.obs, err = f.js.ObjectStore(ctx, ObjectStore)
		}
	}
	if err != nil {
		return fmt.Errorf("object store %s: %w", ObjectStore, err)
	}
	return nil
}

// consumer is the workers' durable pull consumer, made when missing (an
// existing one is used as it is, like the stream). Its MaxDeliver is
// unlimited: the worker that gets a delivery past MaxAttempts fails the
// task with the reason (the server alone would only stop delivering it).
func (f *Fleet) consumer(ctx context.Context) (jetstream.Consumer, error) {
	var c jetstream.Consumer
	err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
		var err error
		c, err = f.js.Consumer(ctx, TaskStream, Consumer)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			c, err = f.js.CreateConsumer(ctx, TaskStream, jetstream.ConsumerConfig{
				Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: f.opts.AckWait,
				MaxDeliver: -1, MaxAckPending: 100_000, Replicas: f.opts.Replicas,
			})
			if errors.Is(err, jetstream.ErrConsumerExists) {
				c, err = f.js.Consumer(ctx, TaskStream, Consumer)
			}
		}
		return err
	})
	if err == nil {
		// The in-progress rhythm follows the consumer's ack wait.
		f.opts.AckWait = c.CachedInfo().Config.AckWait
	}
	return c, err
}

// Close disconnects and stops the embedded server this process runs.
func (f *Fleet) Close() {
	if f.nc != nil {
		f.nc.Drain()
		f.nc.Close()
	}
	if f.embedded != nil {
		f.embedded.Shutdown()
		f.embedded.WaitForShutdown()
		os.Remove(filepath.Join(f.opts.Store, "server.json"))
	}
	if f.lock != nil {
		f.lock.Close()
	}
}

// retry runs op until it succeeds, fails for a reason other than the
// server being busy or away (a cluster electing a leader, a node
// restarting), or within has passed.
func retry(ctx context.Context, within time.Duration, op func(context.Context) error) error {
	deadline := time.Now().Add(within)
	wait := 50 * time.Millisecond
	for {
		octx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := op(octx)
		cancel()
		if err == nil || !transient(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(wait*2, time.Second)
	}
}

// transient says err is the server being away or busy, not a refusal.
func transient(err error) bool {
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) ||
		errors.Is(err, jetstream.ErrObjectNotFound) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503 and the cluster's "no leader", "not current" codes.
		return apiErr.Code == 503 || apiErr.Code == 500 || apiErr.ErrorCode == 10008 || apiErr.ErrorCode == 10009
	}
	s := err.Error()
	return strings.Contains(s, "timeout") || strings.Contains(s, "no responders") || strings.Contains(s, "leader")
}

// DefaultStore is the embedded server's folder when neither --store nor
// [fleet] store names one: $XDG_DATA_HOME/pi-go/fleet, else
// ~/.local/share/pi-go/fleet (outside the sandbox's writable roots, so a
// run cannot write to the queue or to another run's workspace).
func DefaultStore() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pi-go", "fleet")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "pi-go", "fleet")
	}
	return filepath.Join(os.TempDir(), "pi-go-fleet")
}

// Replicas is the task stream's replica count, as the server has it.
func (f *Fleet) Replicas(ctx context.Context) (int, error) {
	s, err := f.js.Stream(ctx, TaskStream)
	if err != nil {
		return 0, err
	}
	return s.CachedInfo().Config.Replicas, nil
}
