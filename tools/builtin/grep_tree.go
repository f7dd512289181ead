package builtin

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/internal/gitignore"
	"github.com/pi-go/pi/internal/output"
)

// The parallel search of a tree. Every goroutine walks and searches: a task
// is the listing of one directory (and the search of its first files) or
// the search of a later run of a directory's files. Listing a directory
// builds its node: its entries the walk visits, in order — files to search
// and directories to enter, each directory a node of its own. The merge
// goes through the nodes depth first, in the order of the one-goroutine
// walk, waiting for each task as it reaches it (or running it itself when
// no goroutine has started it yet), and merges each file's results exactly
// as the one-goroutine search does. Pending tasks are taken earliest in
// walk order first, and no goroutine starts a task while grepAhead tasks
// are done or under way that the merge has not reached: the search stays
// close to the merge, so little is searched past a match limit, few
// results wait in memory, and few directories are held open.
//
// A directory stays open from its listing until its files are searched
// and its subdirectories listed: both are opened relative to it (openat),
// which resolves one path component instead of the whole path, and
// without following a symbolic link (O_NOFOLLOW). What the walk saw as a
// file or a directory and finds swapped for a link when it opens it is
// skipped, and no directory above can have been swapped: the search never
// leaves the tree, however it changes while it runs.

// grepChunk is how many files of a directory one task searches.
var grepChunk = 16

// grepAhead is how many tasks may be started or done past the point the
// merge has reached.
var grepAhead = 128

// grepListed, when set (by tests), is called with a directory's relative
// path (with a trailing '/', "" for the root) once it is listed, before
// any of its files is opened.
var grepListed func(relDir string)

// treeTask is one task of the parallel search.
type treeTask struct {
	key     []int32 // where the task starts in the walk: entry indexes from the root
	node    *treeNode
	list    bool // list node (else search the files of node.items[lo:hi])
	lo, hi  int
	started bool          // taken by a goroutine (under treeSearch.mu)
	done    chan struct{} // closed when finished
	at      int           // index in the heap
}

// treeNode is one directory of the parallel search.
type treeNode struct {
	dir    *gitignore.Dir
	parent *treeNode // nil for the root
	listed *treeTask // its listing; once done, fd and items are set
	fd     int       // the open directory, -1 when none
	// refs counts the tasks that still need fd: the searches of its files
	// and the listings of its subdirectories (opened relative to it).
	refs  atomic.Int32
	items []treeItem
}

// treeItem is an entry of a directory the walk visits: a directory to
// enter (sub) or a file to search (task, then hits).
type treeItem struct {
	name string
	sub  *treeNode
	task *treeTask
	hits fileHits
}

// taskHeap orders pending tasks by walk position.
type taskHeap []*treeTask

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(i, j int) bool {
	a, b := h[i].key, h[j].key
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}
func (h taskHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *taskHeap) Push(x any) {
	t := x.(*treeTask)
	t.at = len(*h)
	*h = append(*h, t)
}
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}

// treeSearch is the state of one parallel search.
type treeSearch struct {
	g      *grepper
	ctx    context.Context // the workers' context: the call's, cancelled at the end
	filter *globFilter
	full   *atomic.Bool

	mu      sync.Mutex
	cond    *sync.Cond // a task was pushed, the merge moved on, or the end
	pending taskHeap
	ahead   int // tasks started that the merge has not reached
	active  int // tasks running
	idle    int // goroutines waiting on cond
	stop    bool
}

// searchTreeParallel is searchTree on workers goroutines.
func (g *grepper) searchTreeParallel(root string, filter *globFilter, workers int) error {
	inner, cancel := context.WithCancel(g.ctx)
	defer cancel()
	var full atomic.Bool
	p := &treeSearch{g: g, ctx: bothCtx{Context: inner, outer: g.ctx}, filter: filter, full: &full}
	p.cond = sync.NewCond(&p.mu)
	top := &treeNode{dir: gitignore.NewRoot(root), fd: -1}
	top.listed = &treeTask{key: []int32{}, node: top, list: true, done: make(chan struct{})}
	heap.Push(&p.pending, top.listed)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := g.newSearcher(p.ctx, &full)
			p.work(s)
			s.done()
		}()
	}
	ms := g.newSearcher(p.ctx, &full)
	err := p.mergeNode(top, ms)
	ms.done()
	p.mu.Lock()
	p.stop = true
	p.cond.Broadcast()
	p.mu.Unlock()
	cancel()
	wg.Wait()
	// Directories whose files were never searched, or whose
	// subdirectories were never listed, are still open.
	for _, t := range p.pending {
		if !t.list {
			t.node.release()
		} else if t.node.parent != nil {
			t.node.parent.release()
		}
	}
	if err == nil {
		err = g.ctx.Err() // cancelled while the last directories were listed
	}
	return err
}

// work runs pending tasks until the search ends.
func (p *treeSearch) work(s *grepSearcher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for !p.stop && (len(p.pending) == 0 || p.ahead >= grepAhead) {
			if len(p.pending) == 0 && p.active == 0 {
				return // nothing left to do, nor anything running that could add to it
			}
			p.idle++
			p.cond.Wait()
			p.idle--
		}
		if p.stop {
			return
		}
		t := heap.Pop(&p.pending).(*treeTask)
		t.started = true
		p.ahead++
		p.active++
		p.mu.Unlock()
		p.run(t, s)
		p.mu.Lock()
		p.active--
		if p.active == 0 && len(p.pending) == 0 && p.idle > 0 {
			p.cond.Broadcast() // the end: the waiting goroutines return
		}
	}
}

// await waits until t is done; a task no goroutine has started the merge
// runs itself.
func (p *treeSearch) await(t *treeTask, s *grepSearcher) {
	p.mu.Lock()
	if t.started {
		p.mu.Unlock()
		<-t.done
		p.mu.Lock()
	} else {
		heap.Remove(&p.pending, t.at)
		t.started = true
		p.ahead++
		p.active++
		p.mu.Unlock()
		p.run(t, s)
		p.mu.Lock()
		p.active--
	}
	p.ahead--
	// Goroutines held back by the look-ahead wake once the merge is
	// half way through it: together, not one per task.
	if p.idle > 0 && (p.ahead == grepAhead/2 || (p.active == 0 && len(p.pending) == 0)) {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// mergeNode merges the files of n and of the directories below it, in walk
// order.
func (p *treeSearch) mergeNode(n *treeNode, s *grepSearcher) error {
	g := p.g
	if err := g.ctx.Err(); err != nil {
		return err
	}
	p.await(n.listed, s)
	var cur *treeTask
	for i := range n.items {
		it := &n.items[i]
		if it.sub != nil {
			if err := p.mergeNode(it.sub, s); err != nil {
				return err
			}
			continue
		}
		if it.task != cur {
			cur = it.task
			p.await(cur, s)
		}
		h := it.hits
		it.hits = fileHits{}
		if h.err == nil && !h.stream && !h.more && len(h.hits) == 0 {
			continue
		}
		if err := g.merge(h, n.dir.AbsDir+it.name, n.dir.RelDir+it.name); err != nil {
			return err
		}
		if g.outBytes > output.DefaultMaxBytes {
			p.full.Store(true)
		}
	}
	// Every task of n is done: nothing else reads its entries, which
	// need not stay in memory until the end of the search.
	n.items, n.dir = nil, nil
	return nil
}

// run runs one task.
func (p *treeSearch) run(t *treeTask, s *grepSearcher) {
	if t.list {
		if first := p.list(t, s); first != nil {
			p.search(first, s)
		}
		return
	}
	p.search(t, s)
}

// list lists t's directory, makes the tasks of its subdirectories and
// files, and returns the task of its first files, which the caller runs
// (already counted as started), or nil.
func (p *treeSearch) list(t *treeTask, s *grepSearcher) *treeTask {
	n := t.node
	defer close(t.done)
	if p.ctx.Err() != nil {
		if n.parent != nil {
			n.parent.release()
		}
		return nil // the merge stops at the next directory
	}
	parentFd := -1
	if n.parent != nil {
		parentFd = n.parent.fd
	}
	entries, fd, err := n.dir.ListOpen(&s.dirBuf, parentFd)
	if n.parent != nil {
		n.parent.release()
	}
	n.fd = fd
	if err != nil {
		return nil // an unreadable directory is skipped
	}
	if grepListed != nil {
		grepListed(n.dir.RelDir)
	}
	n.items = make([]treeItem, 0, len(entries))
	files, subs := 0, 0
	for _, e := range entries {
		if p.filter != nil && !p.filter.keepIn(n.dir.RelDir, e.Name, e.IsDir) {
			continue // a directory the glob excludes is not entered
		}
		if (e.IsDir || e.Type == 0) && p.g.hidden.skip(n.dir.AbsDir+e.Name) {
			continue // nor one the permission rules keep from being read
		}
		switch {
		case e.IsDir:
			n.items = append(n.items, treeItem{name: e.Name, sub: &treeNode{dir: n.dir.Sub(e.Name), parent: n, fd: -1}})
			subs++
		case e.Type == 0: // symlinks and devices are not searched
			n.items = append(n.items, treeItem{name: e.Name})
			files++
		}
	}
	var tasks []*treeTask
	child := func(i int) []int32 {
		k := make([]int32, len(t.key)+1)
		copy(k, t.key)
		k[len(t.key)] = int32(i)
		return k
	}
	var chunk *treeTask
	inChunk := 0
	for i := range n.items {
		it := &n.items[i]
		if it.sub != nil {
			it.sub.listed = &treeTask{key: child(i), node: it.sub, list: true, done: make(chan struct{})}
			tasks = append(tasks, it.sub.listed)
			continue
		}
		if chunk == nil || inChunk == grepChunk {
			if chunk != nil {
				chunk.hi = i
			}
			chunk = &treeTask{key: child(i), node: n, lo: i, done: make(chan struct{})}
			tasks = append(tasks, chunk)
			inChunk = 0
		}
		it.task = chunk
		inChunk++
	}
	if chunk != nil {
		chunk.hi = len(n.items)
	}
	n.refs.Store(int32((files+grepChunk-1)/grepChunk + subs))
	if files == 0 && subs == 0 {
		n.release()
	}
	// The first run of files is this goroutine's next task.
	var first *treeTask
	for _, c := range tasks {
		if !c.list {
			first = c
			break
		}
	}
	p.mu.Lock()
	for _, c := range tasks {
		if c == first {
			c.started = true
			p.ahead++
			continue
		}
		heap.Push(&p.pending, c)
	}
	if p.idle > 0 && len(p.pending) > 0 && p.ahead < grepAhead {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
	return first
}

// search searches the files of t.
func (p *treeSearch) search(t *treeTask, s *grepSearcher) {
	n := t.node
	for i := t.lo; i < t.hi; i++ {
		it := &n.items[i]
		if it.sub != nil {
			continue
		}
		if err := p.ctx.Err(); err != nil {
			it.hits = fileHits{err: err}
			continue
		}
		it.hits = s.searchAt(n.fd, n.dir, it.name, p.g.limit)
	}
	close(t.done)
	n.release()
}

// release drops one task's hold on the open directory; the last closes it.
func (n *treeNode) release() {
	if n.refs.Add(-1) <= 0 && n.fd >= 0 {
		closeDir(n.fd)
		n.fd = -1
	}
}

// searchAt searches the file name of dir (open as dirfd, or -1) as
// searchFile does.
func (s *grepSearcher) searchAt(dirfd int, dir *gitignore.Dir, name string, quota int) fileHits {
	data, big, binary, err := readWholeAt(dirfd, dir.AbsDir, name, s.buf, grepWholeFileMax, grepPeekSize, hasNUL)
	if big {
		return fileHits{stream: true}
	}
	if err != nil || binary {
		return fileHits{}
	}
	s.buf = data[:0]
	return s.searchData(data, dir.RelDir, name, quota)
}
