// Package cells routes each tenant to its cell — an independent Dgraph cluster served through
// one graph.Client — by a directory tenant → cell, and moves a tenant between cells by export
// and import with a short read-only window (docs/scale.md, "Past one Dgraph cluster: cells").
//
// The directory is a map under a lock, kept in a file when the router is opened with one
// (Open, directory.go: every change is written before it takes effect, so a crash leaves the
// file saying where each tenant is, or that it is being moved). The package knows nothing of
// HTTP or MCP: a write to a tenant being moved is an unavailable error (503), to which a
// transport adds Retry-After.
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
	Cell     string `json:"cell"`
	ReadOnly bool   `json:"read_only,omitempty"` // a move is under way: reads go on, writes are refused (retryable)
	// Move names the move that set the mark; each serve process confirms it (serves.go).
	Move string `json:"move,omitempty"`
}

// Router holds the cells and the directory.
type Router struct {
	cells map[string]*graph.Client
	// home is the cell of a tenant the directory does not list ("": such a tenant is unknown).
	home string
	// file keeps the directory between processes ("": in this process only).
	file string

	mu    sync.Mutex
	place map[string]Placement
	// gates hold a tenant's writes while its placement changes: a write holds its tenant's
	// gate for reading for as long as it runs, a move takes it for writing to mark the tenant
	// read-only, so no write is in flight when the export begins.
	gates map[string]*sync.RWMutex
	// moving are the tenants this router is moving now.
	moving map[string]bool
}

// New is a router over the named cells, with an empty directory held in this process.
func New(cells map[string]*graph.Client) *Router {
	return &Router{cells: cells, place: map[string]Placement{}, gates: map[string]*sync.RWMutex{}, moving: map[string]bool{}}
}

// Open is a router over the named cells whose directory is kept in the file at path (read now,
// written at every change; a missing file is an empty directory). A tenant the directory does
// not list is in the cell home: the cell a deployment had before it had cells.
func Open(cells map[string]*graph.Client, home, path string) (*Router, error) {
	if _, ok := cells[home]; !ok {
		return nil, knowmind.InvalidParam("cell", "no cell %q", home)
	}
	d, err := ReadDirectory(path)
	if err != nil {
		return nil, err
	}
	r := New(cells)
	r.home, r.file = home, path
	for tenant, p := range d.Tenants {
		if _, ok := cells[p.Cell]; !ok {
			return nil, fmt.Errorf("directory %s: tenant %q is in cell %q, which is not open", path, tenant, p.Cell)
		}
		r.place[tenant] = p
	}
	return r, nil
}

// setLocked changes tenant's entry, writing the directory file first (r.mu held): an entry the
// file could not keep does not take effect.
// An entry that says what an unlisted tenant's would (home, writable) is removed instead.
func (r *Router) setLocked(tenant string, p Placement) error {
	unlisted := p == Placement{Cell: r.home}
	if r.file != "" {
		if err := updateDirectory(r.file, func(d *Directory) {
			if unlisted {
				delete(d.Tenants, tenant)
			} else {
				d.Tenants[tenant] = p
			}
		}); err != nil {
			return fmt.Errorf("cell directory: %w", err)
		}
	}
	if unlisted {
		delete(r.place, tenant)
	} else {
		r.place[tenant] = p
	}
	return nil
}

// placementLocked is tenant's entry: the directory's, else home (r.mu held).
func (r *Router) placementLocked(tenant string) (Placement, bool) {
	if p, ok := r.place[tenant]; ok {
		return p, true
	}
	if r.home != "" {
		return Placement{Cell: r.home}, true
	}
	return Placement{}, false
}

// gateLocked is tenant's write gate (r.mu held).
func (r *Router) gateLocked(tenant string) *sync.RWMutex {
	g := r.gates[tenant]
	if g == nil {
		g = &sync.RWMutex{}
		r.gates[tenant] = g
	}
	return g
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
	err := r.setLocked(tenant, Placement{Cell: cell})
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if _, err := c.Tenant(ctx, tenant, true); err != nil {
		r.mu.Lock()
		r.setLocked(tenant, Placement{Cell: r.home}) // unlisted again; a file left saying otherwise names an empty namespace
		r.mu.Unlock()
		return fmt.Errorf("place tenant %q in cell %s: %w", tenant, cell, err)
	}
	return nil
}

// Placement is where the directory puts tenant.
func (r *Router) Placement(tenant string) (Placement, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.placementLocked(tenant)
}

// Tenants lists the tenants the directory places in a cell (not home's unlisted ones).
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
	p, ok := r.placementLocked(tenant)
	gate := r.gateLocked(tenant)
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
	_, ok := r.placementLocked(tenant)
	gate := r.gateLocked(tenant)
	r.mu.Unlock()
	if !ok {
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
	Tenant   string
	From, To string
	Move     string        // the move's id (its read-only mark's)
	Records  int           // records exported, and found again in the target's export
	Tokens   int           // tokens copied to the target cell's default namespace
	Confirm  time.Duration // step 1: until every serve process confirmed the read-only mark
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
// the operator (the next try drops it and imports again). The source namespace is kept: DropSource
// drops it (step 5).
func (r *Router) Move(ctx context.Context, tenant, to, dir string) (MoveReport, error) {
	rep := MoveReport{Tenant: tenant, To: to}
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
	// 1. Read-only, once no write is in flight. A mark found in the directory with no move of
	// this router under way is an interrupted move's: this one takes it over.
	gate.Lock()
	start := time.Now()
	move, err := r.startMove(tenant, p.Cell)
	gate.Unlock()
	if err != nil {
		return rep, err
	}
	rep.Move = move
	switched := false
	defer func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.moving, tenant)
		if !switched {
			if err := r.setLocked(tenant, Placement{Cell: p.Cell}); err != nil {
				// The file still says read-only: writes stay refused, nothing is lost, and
				// the next move takes the mark over.
				r.place[tenant] = Placement{Cell: p.Cell, ReadOnly: true}
			}
		}
	}()

	// Every serve process of the directory file confirms the mark: none has a write of the
	// tenant running, and each refuses the next.
	if r.file != "" {
		if err := awaitServes(ctx, r.file, tenant, move); err != nil {
			return rep, fmt.Errorf("move %q: %w", tenant, err)
		}
	}
	rep.Confirm = time.Since(start)

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
	// What the target holds of the tenant is older than the source: the copy a move away from
	// it kept, or part of an earlier try's import. It is dropped and the import starts from
	// nothing, so a move back never imports over stale records.
	if err := target.DropTenant(ctx, tenant); err != nil {
		return rep, fmt.Errorf("move %q: drop the older copy in %s: %w", tenant, to, err)
	}
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
	// Tokens move with the tenant: its agents keep their credentials, and from the switch on the
	// target's rows are the ones that count (tokens.go).
	prefix := ""
	if p.Cell != r.home {
		prefix = p.Cell + ":"
	}
	if rep.Tokens, err = target.CopyTokens(ctx, r.cells[p.Cell], tenant, prefix); err != nil {
		return rep, fmt.Errorf("move %q: tokens into %s: %w", tenant, to, err)
	}

	// 4. Switch and lift the mark.
	r.mu.Lock()
	err = r.setLocked(tenant, Placement{Cell: to})
	switched = err == nil
	r.mu.Unlock()
	if err != nil {
		return rep, fmt.Errorf("move %q: switch to %s: %w", tenant, to, err)
	}
	rep.ReadOnly = time.Since(start)
	return rep, nil
}

// DropCopy drops the namespace a move left in cell, the cell the tenant left (step 5): only
// while the directory places the tenant in another cell with no move under way, and once every
// serve process has seen it there (a serve that still routed the tenant to cell would read an
// empty namespace). Never before: the source is the tenant until the target is verified and
// switched to. A read a serve began on the copy before it saw the switch and still runs when the
// namespace goes ends with an error; the agent's retry reaches the tenant's cell.
func (r *Router) DropCopy(ctx context.Context, tenant, cell string) error {
	c, ok := r.cells[cell]
	if !ok {
		return knowmind.InvalidParam("cell", "no cell %q", cell)
	}
	r.mu.Lock()
	p, ok := r.placementLocked(tenant)
	moving := r.moving[tenant]
	r.mu.Unlock()
	if !ok || p.Cell == cell || p.ReadOnly || moving {
		return knowmind.Errorf(knowmind.ECONFLICT, "tenant %q lives in cell %s (read-only %v): its namespace in %s is not a copy to drop", tenant, p.Cell, p.ReadOnly || moving, cell)
	}
	if r.file != "" {
		if err := awaitSwitch(ctx, r.file, tenant); err != nil {
			return fmt.Errorf("drop the copy of %q in %s: %w", tenant, cell, err)
		}
	}
	return c.DropTenant(ctx, tenant)
}

// startMove marks the tenant read-only for a move if it is still in cell and no move of this
// router runs for it.
func (r *Router) startMove(tenant, cell string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.placementLocked(tenant)
	if !ok || p.Cell != cell || r.moving[tenant] {
		return "", knowmind.Errorf(knowmind.ECONFLICT, "tenant %q moved or is moving already", tenant)
	}
	move := newMoveID()
	if err := r.setLocked(tenant, Placement{Cell: cell, ReadOnly: true, Move: move}); err != nil {
		return "", err
	}
	r.moving[tenant] = true
	return move, nil
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
