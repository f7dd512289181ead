package fleet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/fleet"
)

// BenchmarkFleet: batches of tasks (a scripted model making one bash edit)
// through the embedded server and one in-process worker running real pi
// processes, at 1, 4 and 16 runs at once. It reports tasks per minute
// (submit to the last result), and per task: the pi run's time, the
// workspace's (unpack, git baseline, patch) and the queue's (submit: pack,
// status, publish; claim; storing the result; the final status; ack).
func BenchmarkFleet(b *testing.B) {
	for _, conc := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			e := newBenchEnv(b)
			e.writeScript("echo edited >> a.txt")
			f, err := fleet.Open(context.Background(), fleet.Options{Store: e.store})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			drain, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- f.Work(drain, context.Background(), e.workerOptions("bench", conc)) }()
			const batch = 32
			var tasks, runSum, wsSum, taskSum, submitSum float64
			var elapsed time.Duration
			b.ResetTimer()
			for n := range b.N {
				var ts []fleet.Task
				var ids []string
				for i := range batch {
					id := fmt.Sprintf("b%d-%d", n, i)
					ts = append(ts, fleet.Task{ID: id, Repo: e.repo(fmt.Sprint(i)), Prompt: fleet.Strings{"edit"}})
					ids = append(ids, id)
				}
				start := time.Now()
				if _, err := f.Submit(context.Background(), ts); err != nil {
					b.Fatal(err)
				}
				submitSum += time.Since(start).Seconds()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				final, err := f.Wait(ctx, ids, nil, false)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				for _, s := range final {
					if s.State != fleet.StateDone {
						b.Fatalf("%s: %s %s", s.ID, s.State, s.Reason)
					}
					runSum += s.Result.RunSeconds
					wsSum += s.Result.Seconds - s.Result.RunSeconds
					taskSum += s.Finished.Sub(*s.Started).Seconds()
				}
				tasks += batch
			}
			b.StopTimer()
			stop()
			<-done
			b.ReportMetric(tasks/elapsed.Minutes(), "tasks/min")
			b.ReportMetric(1000*runSum/tasks, "pi-run-ms/task")
			b.ReportMetric(1000*wsSum/tasks, "workspace-patch-ms/task")
			b.ReportMetric(1000*(submitSum+taskSum-runSum-wsSum)/tasks, "queue-ms/task")
			b.ReportMetric(0, "ns/op")
		})
	}
}
