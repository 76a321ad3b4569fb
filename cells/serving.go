package cells

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// Serving is what a serve process reads tenants through: the directory file, re-read whenever
// it changes (checked on every call and every PollInterval), routes each tenant to its cell —
// home's client, or a client of the cell's cluster opened on first use — and holds the writes
// of a tenant marked read-only by a move (knowmind.Gate): they are refused (unavailable, 503)
// until the mark is lifted, and every write admitted before the mark has finished before this
// process confirms the mark to the mover (serves.go). Reads are never held.
type Serving struct {
	home *graph.Client
	path string
	open func(ctx context.Context, name string, c Cell) (*graph.Client, error)
	log  *slog.Logger
	reg  *registration
	stop context.CancelFunc
	done chan struct{}

	// reloading serialises reloads: a slower one storing an older read over a newer one would
	// lift a mark this process has confirmed.
	reloading sync.Mutex
	mu        sync.Mutex
	dir       Directory
	stamp     fileStamp
	clients   map[string]*graph.Client
	opening   map[string]*sync.Mutex // one open per cell at a time
	gates     map[string]*sync.RWMutex
	acks      map[string]string // tenant → the move id whose mark this process confirmed
	// tokenCells remembers the cell whose row verified a token (by hash), asked first next time.
	tokenCells map[string]string
}

var (
	_ knowmind.Workspaces = (*Serving)(nil)
	_ knowmind.Gate       = (*Serving)(nil)
)

// PollInterval is how often a serve checks the directory file between calls (for marks to
// confirm while no call comes).
var PollInterval = 100 * time.Millisecond

// fileStamp tells whether the directory file changed since it was read.
type fileStamp struct {
	ok    bool
	mtime time.Time
	size  int64
	ino   uint64
}

func stampOf(path string) (fileStamp, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{ok: true, mtime: st.ModTime(), size: st.Size()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.ino = sys.Ino
	}
	return s, nil
}

// OpenServing reads the directory file at path, registers this process as one of its serves and
// starts watching it; open opens a client of a cell the directory names (on a tenant's first
// call there). Close ends it.
func OpenServing(home *graph.Client, path string, open func(ctx context.Context, name string, c Cell) (*graph.Client, error), log *slog.Logger) (*Serving, error) {
	reg, err := register(path)
	if err != nil {
		return nil, err
	}
	s := &Serving{home: home, path: path, open: open, log: log, reg: reg, clients: map[string]*graph.Client{},
		opening: map[string]*sync.Mutex{}, gates: map[string]*sync.RWMutex{}, acks: map[string]string{}, tokenCells: map[string]string{},
		done: make(chan struct{})}
	// Registered before the first read: a mark written before it is seen now, one written after
	// by the next read, and a mover that listed the serves before this one registered wrote its
	// mark before this read.
	if err := s.reload(); err != nil {
		reg.close()
		return nil, err
	}
	if err := s.confirm(); err != nil {
		reg.close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(PollInterval):
			}
			err := s.reload()
			if err == nil {
				err = s.confirm()
			}
			if err != nil {
				s.log.Warn("cell directory", "path", path, "err", err)
			}
		}
	}()
	return s, nil
}

// Close stops watching, leaves the serves' folder and closes the cells' clients (not home's).
func (s *Serving) Close() {
	s.stop()
	<-s.done
	s.reg.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		c.Close()
	}
	s.clients = map[string]*graph.Client{}
}

// reload re-reads the directory file if it changed. It never waits for a call: a tool call
// reloads while it holds its tenant's gate.
func (s *Serving) reload() error {
	s.reloading.Lock()
	defer s.reloading.Unlock()
	stamp, err := stampOf(s.path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	same := s.dir.Tenants != nil && stamp == s.stamp
	s.mu.Unlock()
	if same {
		return nil
	}
	d, err := ReadDirectory(s.path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.dir
	s.dir, s.stamp = d, stamp
	var clients []*graph.Client
	if s.home != nil {
		clients = append(clients, s.home)
	}
	for _, c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	// A tenant the directory moved is forgotten by every cell's client: its session and indexes
	// are of the namespace it left, and a tenant moved back lives in a new namespace.
	if old.Tenants != nil {
		for _, tenant := range movedTenants(old, d) {
			for _, c := range clients {
				c.Forget(tenant)
			}
		}
	}
	return nil
}

// movedTenants are the tenants whose cell differs between two reads of the directory.
func movedTenants(old, now Directory) []string {
	cell := func(d Directory, tenant string) string {
		if p, ok := d.Tenants[tenant]; ok && p.Cell != "" {
			return p.Cell
		}
		return HomeCell
	}
	var out []string
	for tenant := range old.Tenants {
		if cell(old, tenant) != cell(now, tenant) {
			out = append(out, tenant)
		}
	}
	for tenant := range now.Tenants {
		if _, listed := old.Tenants[tenant]; !listed && cell(now, tenant) != HomeCell {
			out = append(out, tenant)
		}
	}
	return out
}

// confirm acknowledges the read-only marks of the directory this process has not confirmed yet,
// each once the writes admitted before it are done (writes that enter after the reload that
// brought the mark see it and are refused).
func (s *Serving) confirm() error {
	type mark struct {
		tenant, move string
		gate         *sync.RWMutex
	}
	var marks []mark
	s.mu.Lock()
	acks := map[string]string{}
	for tenant, p := range s.dir.Tenants {
		if !p.ReadOnly || p.Move == "" {
			continue
		}
		if s.acks[tenant] == p.Move {
			acks[tenant] = p.Move
			continue
		}
		marks = append(marks, mark{tenant, p.Move, s.gateLocked(tenant)})
	}
	unchanged := len(marks) == 0 && len(acks) == len(s.acks)
	s.mu.Unlock()
	if unchanged {
		return nil
	}
	for _, m := range marks {
		m.gate.Lock() // waits for the writes holding it
		acks[m.tenant] = m.move
		m.gate.Unlock()
	}
	if err := s.reg.write(acks); err != nil {
		return err
	}
	s.mu.Lock()
	s.acks = acks
	s.mu.Unlock()
	return nil
}

func (s *Serving) gateLocked(tenant string) *sync.RWMutex {
	g := s.gates[tenant]
	if g == nil {
		g = &sync.RWMutex{}
		s.gates[tenant] = g
	}
	return g
}

// placement is tenant's entry as the directory file says now.
func (s *Serving) placement(tenant string) (Placement, Cell, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.dir.Tenants[tenant]
	if !ok {
		return Placement{}, Cell{}, false
	}
	return p, s.dir.Cells[p.Cell], true
}

// Enter admits one call of tenant: a write is refused while the tenant is read-only, and holds
// the tenant's gate until leave, so a mark waits for it.
func (s *Serving) Enter(ctx context.Context, tenant string, writes bool) (func(), error) {
	if err := s.reload(); err != nil {
		return nil, knowmind.Errorf(knowmind.EUNAVAILABLE, "the cell directory cannot be read; retry shortly")
	}
	if !writes {
		return func() {}, nil
	}
	s.mu.Lock()
	gate := s.gateLocked(tenant)
	s.mu.Unlock()
	gate.RLock()
	if p, _, listed := s.placement(tenant); listed && p.ReadOnly {
		gate.RUnlock()
		return nil, errReadOnly(tenant)
	}
	return gate.RUnlock, nil
}

// Workspace opens tenant's workspace in its cell: home's for a tenant the directory does not list.
func (s *Serving) Workspace(ctx context.Context, tenant string, create bool) (knowmind.Workspace, error) {
	if err := s.reload(); err != nil {
		return nil, knowmind.Errorf(knowmind.EUNAVAILABLE, "the cell directory cannot be read; retry shortly")
	}
	p, cell, listed := s.placement(tenant)
	if !listed || p.Cell == HomeCell {
		return s.home.Workspace(ctx, tenant, create)
	}
	c, err := s.client(ctx, p.Cell, cell)
	if err != nil {
		s.log.Error("cell not reachable", "cell", p.Cell, "tenant", tenant, "err", err)
		return nil, knowmind.Errorf(knowmind.EUNAVAILABLE, "tenant %q lives in cell %s, which this service cannot reach now; retry shortly", tenant, p.Cell)
	}
	return c.Workspace(ctx, tenant, create)
}

// HomeCell is the home cell's name in the directory: the cluster of serve's own flags, where
// every tenant the directory does not list is (one moved back home is not listed).
const HomeCell = "home"

// client is the cell's client, opened on first use.
func (s *Serving) client(ctx context.Context, name string, c Cell) (*graph.Client, error) {
	s.mu.Lock()
	if cl := s.clients[name]; cl != nil {
		s.mu.Unlock()
		return cl, nil
	}
	if len(c.Dgraph) == 0 {
		s.mu.Unlock()
		return nil, fmt.Errorf("the directory names no alphas for cell %s", name)
	}
	one := s.opening[name]
	if one == nil {
		one = &sync.Mutex{}
		s.opening[name] = one
	}
	s.mu.Unlock()
	one.Lock()
	defer one.Unlock()
	s.mu.Lock()
	cl := s.clients[name]
	s.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	cl, err := s.open(ctx, name, c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.clients[name] = cl
	s.mu.Unlock()
	return cl, nil
}

// Capabilities are home's: every cell runs the same service with the same embedder.
func (s *Serving) Capabilities() knowmind.Capabilities { return s.home.Capabilities() }
