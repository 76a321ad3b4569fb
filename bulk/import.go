package bulk

import (
	"context"
	"fmt"
	"time"

	"github.com/knowmind/knowmind"
)

// Phase is which records of a source a pass reads: every memory and document
// first, then every relation, goal and draft (knowmind.AfterEntries), so they may
// name a memory anywhere in the source.
type Phase int

const (
	PhaseEntries Phase = iota
	PhaseRelations
)

// Item is one record of a source, or why it could not be read.
type Item struct {
	Where  string // file:line, or the note's path, for messages
	Record knowmind.Record
	Err    error
}

// Source is what an import reads. Its items come in a fixed order (entries,
// then relations), which the cursor counts.
type Source interface {
	Name() string
	// Key identifies the source's content; it names the import's cursor.
	Key() string
	// Total is the number of items of both phases.
	Total() int
	Each(ctx context.Context, phase Phase, fn func(Item) error) error
}

// Target is where an import writes (implemented by *graph.Tenant).
type Target interface {
	ImportCursor(ctx context.Context, key string) (int, error)
	WriteEntries(ctx context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error)
	// WriteRelations writes the records of PhaseRelations: relations, goals and drafts.
	WriteRelations(ctx context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error)
}

// Options of an import; the zero value works.
type Options struct {
	Batch    int            // records per transaction; 0 = knowmind.ImportBatchSize
	Progress func(Progress) // called after every batch
}

// Progress is where an import stands.
type Progress struct {
	Done, Total int // items, the resumed ones included
	Resumed     int // items skipped because an earlier run committed them
	Written     int // this run: memories, documents and relations written
	Unchanged   int // this run: already stored
	Failed      int // this run: refused (see Summary.Failures)
	Elapsed     time.Duration
}

// Rate is this run's items per second.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done-p.Resumed) / p.Elapsed.Seconds()
}

// ETA is the time left at this run's rate (0 when unknown).
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r <= 0 {
		return 0
	}
	return time.Duration(float64(p.Total-p.Done) / r * float64(time.Second))
}

// Failure is one refused item.
type Failure struct {
	Where string
	ID    string
	Err   error
}

// MaxFailures bounds the failures a Summary keeps (all are counted).
const MaxFailures = 100

// Summary is the outcome of an import.
type Summary struct {
	Progress
	Failures []Failure
	// Entries is how many memories and documents the source holds (resumed ones included),
	// EntriesTook how long this run spent on them; relations took the rest of Elapsed.
	Entries     int
	EntriesTook time.Duration
}

// Import writes src into tgt in batches of opt.Batch records, each batch in
// one transaction with the cursor, starting after what an earlier run of the
// same source committed. Refused items are counted and listed, not fatal; an
// error (Dgraph unreachable, the embedder failing, ctx ended) stops the
// import, and running it again resumes after the last committed batch.
func Import(ctx context.Context, src Source, tgt Target, opt Options) (Summary, error) {
	batch := opt.Batch
	if batch <= 0 {
		batch = knowmind.ImportBatchSize
	}
	if batch > knowmind.MaxImportBatchSize {
		return Summary{}, knowmind.InvalidParam("batch", "batch must be at most %d", knowmind.MaxImportBatchSize)
	}
	start := time.Now()
	resumed, err := tgt.ImportCursor(ctx, src.Key())
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	sum.Total, sum.Resumed, sum.Done = src.Total(), min(resumed, src.Total()), 0
	pos := 0
	var pending []Item
	flush := func(phase Phase) error {
		if len(pending) == 0 {
			return nil
		}
		recs := make([]knowmind.Record, 0, len(pending))
		idx := make([]int, 0, len(pending)) // pending index of each record sent
		for i, it := range pending {
			if it.Err != nil {
				sum.fail(it.Where, it.Record.ID, it.Err)
				continue
			}
			recs = append(recs, it.Record)
			idx = append(idx, i)
		}
		write := tgt.WriteEntries
		if phase == PhaseRelations {
			write = tgt.WriteRelations
		}
		results, err := write(ctx, recs, knowmind.BatchCursor{Key: src.Key(), Done: pos})
		if err != nil {
			return fmt.Errorf("batch ending at %s: %w", pending[len(pending)-1].Where, err)
		}
		for i, r := range results {
			switch r.Status {
			case knowmind.ItemIndexed, knowmind.ItemStored:
				sum.Written++
			case knowmind.ItemUnchanged:
				sum.Unchanged++
			default:
				sum.fail(pending[idx[i]].Where, r.ID, r.Err)
			}
		}
		sum.Done = pos
		sum.Elapsed = time.Since(start)
		pending = pending[:0]
		if opt.Progress != nil {
			opt.Progress(sum.Progress)
		}
		return nil
	}
	for _, phase := range []Phase{PhaseEntries, PhaseRelations} {
		err := src.Each(ctx, phase, func(it Item) error {
			pos++
			if pos <= resumed {
				sum.Done = pos
				return nil
			}
			pending = append(pending, it)
			if len(pending) >= batch {
				return flush(phase)
			}
			return nil
		})
		if err == nil {
			err = flush(phase)
		}
		if phase == PhaseEntries && err == nil {
			sum.Entries, sum.EntriesTook = pos, time.Since(start)
		}
		if err != nil {
			sum.Elapsed = time.Since(start)
			return sum, err
		}
	}
	sum.Done = pos
	sum.Elapsed = time.Since(start)
	return sum, nil
}

func (s *Summary) fail(where, id string, err error) {
	s.Failed++
	if len(s.Failures) < MaxFailures {
		s.Failures = append(s.Failures, Failure{Where: where, ID: id, Err: err})
	}
}
