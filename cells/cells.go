// Package cells routes each tenant to its cell — an independent Dgraph cluster served through
// one graph.Client — by a directory tenant → cell, and moves a tenant between cells by export
// and import with a short read-only window (docs/scale.md, "Past one Dgraph cluster: cells").
//
// The directory here is held in the process (a map under a lock); docs/scale.md places it in a
// directory cell's default namespace, cached by every service process. The package knows
// nothing of HTTP or MCP: a write to a tenant being moved is an unavailable error (503), to which
// a transport adds Retry-After.
package cells

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
	"github.com/knowmind/knowmind/graph"
)

// Placement is a tenant's directory entry.
type Placement struct {
	Cell     string
	ReadOnly bool // a move is under way: reads go on, writes are refused (retryable)
}

// Router holds the cells and the directory.
type Router struct {
	cells map[string]*graph.Client

	mu    sync.Mutex
	place map[string]Placement
	// gates hold a tenant's writes while its placement changes: a write holds its tenant's
	// gate for reading for as long as it runs, a move takes it for writing to mark the tenant
	// read-only, so no write is in flight when the export begins.
	gates map[string]*sync.RWMutex
}

// New is a router over the named cells, with an empty directory.
func New(cells map[string]*graph.Client) *Router {
	return &Router{cells: cells, place: map[string]Placement{}, gates: map[string]*sync.RWMutex{}}
}

// Place puts a new tenant in a cell and creates it there.
func (r *Router) Place(ctx context.Context, tenant, cell string) error {
	c, ok := r.cells[cell]
	if !ok {
		return knowmind.InvalidParam("cell", "no cell %q", cell)
	}
	r.mu.Lock()
	if _, taken := r.place[tenant]; taken {
		r.mu.Unlock()
		return knowmind.Errorf(knowmind.ECONFLICT, "tenant %q is placed already", tenant)
	}
	r.place[tenant] = Placement{Cell: cell}
	r.gates[tenant] = &sync.RWMutex{}
	r.mu.Unlock()
	if _, err := c.Tenant(ctx, tenant, true); err != nil {
		r.mu.Lock()
		delete(r.place, tenant)
		delete(r.gates, tenant)
		r.mu.Unlock()
		return fmt.Errorf("place tenant %q in cell %s: %w", tenant, cell, err)
	}
	return nil
}

// Placement is where the directory puts tenant.
func (r *Router) Placement(tenant string) (Placement, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.place[tenant]
	return p, ok
}

// Tenants lists the tenants of a cell.
func (r *Router) Tenants(cell string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for t, p := range r.place {
		if p.Cell == cell {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

func (r *Router) open(ctx context.Context, tenant string) (*graph.Tenant, *sync.RWMutex, Placement, error) {
	r.mu.Lock()
	p, ok := r.place[tenant]
	gate := r.gates[tenant]
	r.mu.Unlock()
	if !ok {
		return nil, nil, p, knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q not found", tenant)
	}
	t, err := r.cells[p.Cell].Tenant(ctx, tenant, false)
	if err != nil {
		return nil, nil, p, fmt.Errorf("open tenant %q in cell %s: %w", tenant, p.Cell, err)
	}
	return t, gate, p, nil
}

// Read runs fn on the tenant in its cell as the directory says now. Reads are never held: during
// a move they go to the source cell until the directory switches, then to the target.
func (r *Router) Read(ctx context.Context, tenant string, fn func(*graph.Tenant) error) error {
	t, _, _, err := r.open(ctx, tenant)
	if err != nil {
		return err
	}
	return fn(t)
}

// errReadOnly is the error of a write to a tenant being moved: retryable, after about the
// read-only window.
func errReadOnly(tenant string) error {
	return knowmind.Errorf(knowmind.EUNAVAILABLE, "tenant %q is being moved between cells; retry shortly", tenant)
}

// Write runs fn on the tenant in its cell, unless the tenant is read-only (a move), which is
// an unavailable error. The tenant cannot turn read-only while fn runs.
func (r *Router) Write(ctx context.Context, tenant string, fn func(*graph.Tenant) error) error {
	r.mu.Lock()
	gate := r.gates[tenant]
	r.mu.Unlock()
	if gate == nil {
		return knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q not found", tenant)
	}
	gate.RLock()
	defer gate.RUnlock()
	t, _, p, err := r.open(ctx, tenant)
	if err != nil {
		return err
	}
	if p.ReadOnly {
		return errReadOnly(tenant)
	}
	return fn(t)
}

// MoveReport is what a move did and how long each step took.
type MoveReport struct {
	From, To string
	Records  int           // records exported, and found again in the target's export
	Tokens   int           // tokens copied to the target cell's default namespace
	Export   time.Duration // step 2
	Import   time.Duration // step 3, the import
	Verify   time.Duration // step 3, the target's export compared with the source's
	ReadOnly time.Duration // the whole window writes were refused
}

// Move moves tenant to cell to: (1) marks it read-only once its writes in flight are done,
// (2) exports it from its cell into a JSONL file in dir, (3) imports that into a new namespace
// of the target cell, verifies that the target exports the same records and copies the
// tenant's tokens (revoked ones included) to the target cell, (4) switches the
// directory to the target and lifts the read-only mark. Reads go on throughout. On any error
// the tenant stays where it was and writable; what the import wrote to the target is left for
// the operator (a retry resumes it). The source namespace is not dropped: that is step 5, after
// a retention period.
func (r *Router) Move(ctx context.Context, tenant, to, dir string) (MoveReport, error) {
	rep := MoveReport{To: to}
	target, ok := r.cells[to]
	if !ok {
		return rep, knowmind.InvalidParam("cell", "no cell %q", to)
	}
	source, gate, p, err := r.open(ctx, tenant)
	if err != nil {
		return rep, err
	}
	rep.From = p.Cell
	if p.Cell == to {
		return rep, knowmind.InvalidParam("cell", "tenant %q is in cell %s already", tenant, to)
	}

	// 1. Read-only, once no write is in flight.
	gate.Lock()
	start := time.Now()
	if !r.setReadOnly(tenant, p.Cell, true) {
		gate.Unlock()
		return rep, knowmind.Errorf(knowmind.ECONFLICT, "tenant %q moved or is moving already", tenant)
	}
	gate.Unlock()
	switched := false
	defer func() {
		if !switched {
			r.setReadOnly(tenant, p.Cell, false)
		}
	}()

	// 2. Export.
	t := time.Now()
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.jsonl", tenant, p.Cell))
	exported, err := exportTo(ctx, source, tenant, path)
	if err != nil {
		return rep, fmt.Errorf("move %q: export from %s: %w", tenant, p.Cell, err)
	}
	rep.Records, rep.Export = len(exported), time.Since(t)

	// 3. Import into the target, then verify.
	t = time.Now()
	moved, err := target.Tenant(ctx, tenant, true)
	if err != nil {
		return rep, fmt.Errorf("move %q: create in %s: %w", tenant, to, err)
	}
	src, err := bulk.OpenJSONL(path)
	if err != nil {
		return rep, err
	}
	sum, err := bulk.Import(ctx, src, moved, bulk.Options{})
	if err != nil {
		return rep, fmt.Errorf("move %q: import into %s: %w", tenant, to, err)
	}
	if len(sum.Failures) > 0 {
		return rep, fmt.Errorf("move %q: import into %s: %d records failed, the first: %v", tenant, to, len(sum.Failures), sum.Failures[0])
	}
	rep.Import = time.Since(t)
	t = time.Now()
	again, err := exportTo(ctx, moved, tenant, path+".verify")
	if err != nil {
		return rep, fmt.Errorf("move %q: export from %s to verify: %w", tenant, to, err)
	}
	if missing := difference(exported, again); len(missing) > 0 || len(again) != len(exported) {
		return rep, fmt.Errorf("move %q: the target holds %d records, the source %d; %d of the source's differ or are missing (first: %.200s)",
			tenant, len(again), len(exported), len(missing), first(missing))
	}
	rep.Verify = time.Since(t)
	// Tokens move with the tenant: its agents keep their credentials.
	if rep.Tokens, err = target.CopyTokens(ctx, r.cells[p.Cell], tenant); err != nil {
		return rep, fmt.Errorf("move %q: tokens into %s: %w", tenant, to, err)
	}

	// 4. Switch and lift the mark.
	r.mu.Lock()
	r.place[tenant] = Placement{Cell: to}
	switched = true
	r.mu.Unlock()
	rep.ReadOnly = time.Since(start)
	return rep, nil
}

// setReadOnly sets the tenant's read-only mark if it is still in cell and the mark is not
// already so; it reports whether it changed it.
func (r *Router) setReadOnly(tenant, cell string, on bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.place[tenant]
	if !ok || p.Cell != cell || p.ReadOnly == on {
		return false
	}
	p.ReadOnly = on
	r.place[tenant] = p
	return true
}

// exportTo writes the tenant's export to path (knowmind export's format) and returns each record
// as the line it was written as, minus what differs by cell (nothing today: ids, times and
// history are exported as stored). The file holds the whole tenant: only the service's user may
// read it (also when a retried move writes over the file of an earlier try).
func exportTo(ctx context.Context, t *graph.Tenant, tenant, path string) ([]string, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	jw, err := bulk.NewWriter(w, tenant)
	if err != nil {
		return nil, err
	}
	var lines []string
	err = t.Export(ctx, func(rec knowmind.Record) error {
		lines = append(lines, recordKey(rec))
		return jw.Write(rec)
	})
	if err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return lines, f.Close()
}

// recordKey is what must be the same of a record in both cells: all of it (ids, times and
// history are exported as stored).
func recordKey(r knowmind.Record) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// difference is what of want is not in got, as a multiset.
func difference(want, got []string) []string {
	have := map[string]int{}
	for _, g := range got {
		have[g]++
	}
	var out []string
	for _, w := range want {
		if have[w] == 0 {
			out = append(out, w)
			continue
		}
		have[w]--
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
