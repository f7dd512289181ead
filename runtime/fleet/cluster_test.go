package fleet_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/fleet"
)

// natsServerVersion is the nats-server the cluster test builds from the Go
// module (go.mod's version) into the user's cache.
const natsServerVersion = "v2.15.3"

// natsServer builds nats-server from the Go module once into
// ~/.cache/pi-go (outside the repository) and returns its path.
func natsServer(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cache, "pi-go", "nats-server-"+natsServerVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	os.MkdirAll(filepath.Dir(bin), 0o755)
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	out, err := exec.Command("go", "build", "-o", tmp, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		t.Fatalf("go build nats-server: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func freePorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// cluster starts a 3-node NATS cluster with JetStream on loopback ports
// and returns the client URLs and the node processes.
func cluster(t *testing.T, dir string) (string, []*exec.Cmd) {
	bin := natsServer(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 6)
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3+i]))
	}
	var urls []string
	var nodes []*exec.Cmd
	for i := range 3 {
		conf := fmt.Sprintf(`server_name: n%d
listen: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster { name: pi-fleet-test, listen: 127.0.0.1:%d, routes: [%s] }
`, i+1, ports[i], filepath.Join(dir, fmt.Sprintf("n%d", i+1)), ports[3+i], strings.Join(routes, ", "))
		cf := filepath.Join(dir, fmt.Sprintf("n%d.conf", i+1))
		if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-c", cf)
		log, _ := os.Create(filepath.Join(dir, fmt.Sprintf("n%d.log", i+1)))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			log.Close()
		})
		nodes = append(nodes, cmd)
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	for i := range 3 {
		waitUntil(t, 30*time.Second, fmt.Sprintf("node n%d to listen", i+1), func() bool {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i]))
			if err == nil {
				c.Close()
			}
			return err == nil
		})
	}
	return strings.Join(urls, ","), nodes
}

// TestCluster: 50 tasks on a 3-node cluster of real nats-server processes
// with replicated streams, three pi worker processes; one worker is
// SIGKILLed mid-task and one node is killed mid-run; every task must end
// done exactly once with its own patch.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 3-node cluster test")
	}
	if os.Getenv("PI_FLEET_CLUSTER") == "" {
		t.Skip("set PI_FLEET_CLUSTER=1 (as .ci/run does) for the 3-node cluster test")
	}
	e := newEnv(t)
	ctl := e.blockingScript()
	url, nodes := cluster(t, filepath.Join(e.dir, "nats"))
	// No replicas given: on a cluster of three, three.
	f := open(t, fleet.Options{URL: url})
	if r, err := f.Replicas(context.Background()); err != nil || r != 3 {
		t.Fatalf("replicas %d %v, want 3 on a 3-node cluster", r, err)
	}
	const n = 50
	var tasks []fleet.Task
	var ids []string
	for i := range n {
		name := fmt.Sprintf("c%02d", i)
		tasks = append(tasks, fleet.Task{ID: name, Repo: e.repo(name), Prompt: fleet.Strings{"edit"}})
		ids = append(ids, name)
	}
	// c07's first run blocks: the worker that takes it is the one killed.
	os.WriteFile(filepath.Join(ctl, "task_c07.block-first"), nil, 0o600)
	if _, err := f.Submit(context.Background(), tasks); err != nil {
		t.Fatal(err)
	}
	workers := map[string]*exec.Cmd{}
	for _, w := range []string{"w1", "w2", "w3"} {
		workers[w] = e.startWorker(w, "--nats", url, "--ack-wait", "2s", "--concurrency", "4")
	}
	waitUntil(t, 120*time.Second, "c07 to start", func() bool { _, err := os.Stat(filepath.Join(ctl, "task_c07.pid")); return err == nil })
	s, err := f.Get(context.Background(), "c07")
	if err != nil {
		t.Fatal(err)
	}
	victim := s.Worker
	if workers[victim] == nil {
		t.Fatalf("c07 runs on %q", victim)
	}
	workers[victim].Process.Signal(syscall.SIGKILL)
	workers[victim].Wait()
	// A node goes down mid-run.
	nodes[1].Process.Signal(syscall.SIGKILL)
	nodes[1].Wait()
	final := waitAll(t, f, ids, 180*time.Second)
	for i, s := range final {
		checkPatch(t, f, s, ids[i])
	}
	if final[7].Attempt < 2 || final[7].Worker == victim {
		t.Errorf("c07: attempt %d on %s; want it redelivered away from the killed %s", final[7].Attempt, final[7].Worker, victim)
	}
	// A task's model ran at most once per delivery (the runs on the
	// killed worker were delivered again; one killed while its workspace
	// was made never ran), and only the last delivery left a result
	// (checkPatch).
	for i, id := range ids {
		b, _ := os.ReadFile(filepath.Join(ctl, "task_"+id+".count"))
		got, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if got < 1 || got > final[i].Attempt {
			t.Errorf("%s ran %d times, in %d deliveries", id, got, final[i].Attempt)
		}
	}
}
