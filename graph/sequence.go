package graph

// A memory's place in a sequence (Memory.sequence, Memory.position): a conversation's turns, a
// document's parts, one session's notes, in order. Recall scores a memory with the one before it
// in its sequence too (search.Weights.Context): a reply ("been doing it for 3 years") holds the
// answer while the question's words sit in the turn it answers. The text index holds the
// sequences (textdoc.Sequences) so that recall reads no more from Dgraph for it.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/search"
)

// checkSequence bounds a memory's place in a sequence: the key trimmed, at most
// MaxSequenceChars (it is an exact-indexed value), the position 0..MaxSequencePosition; a
// position without a key is refused. pos nil with a key means after the sequence's last.
func checkSequence(key string, pos *int) (string, *int, error) {
	key, err := checkText("sequence", key, knowmind.MaxSequenceChars, false)
	if err != nil {
		return "", nil, err
	}
	if pos == nil {
		return key, nil, nil
	}
	if key == "" {
		return "", nil, knowmind.InvalidParam("position", "position needs a sequence: the key of the conversation or document it is a place in")
	}
	if *pos < 0 || *pos > knowmind.MaxSequencePosition {
		return "", nil, knowmind.InvalidParam("position", "position must be 0 to %d", knowmind.MaxSequencePosition)
	}
	p := *pos
	return key, &p, nil
}

// lastPositionQuery reads the highest position stored in a sequence (failed records included:
// a retried store after a failure takes the next place rather than the failed one's).
const lastPositionQuery = `query q($seq: string) {
  last(func: eq(Memory.sequence, $seq), orderdesc: Memory.position, first: 1) { Memory.position }
}`

// placeInSequences gives the entries that name a sequence without a position the places after
// the last one stored in it or given earlier in entries, in the entries' order. Two writers
// appending to one sequence at the same moment can take the same position; a position shared
// reads as one place (each of them follows the memory before that place).
func (t *Tenant) placeInSequences(ctx context.Context, q querier, entries []*entry) error {
	next := map[string]int{}    // the next free position seen so far per sequence
	stored := map[string]bool{} // the store's last position is counted in next
	for _, e := range entries {
		if e.sequence == "" {
			continue
		}
		if e.positioned {
			next[e.sequence] = max(next[e.sequence], e.position+1)
			continue
		}
		if !stored[e.sequence] {
			last, err := lastPosition(ctx, q, e.sequence)
			if err != nil {
				return err
			}
			next[e.sequence] = max(next[e.sequence], last+1)
			stored[e.sequence] = true
		}
		n := next[e.sequence]
		if n > knowmind.MaxSequencePosition {
			return knowmind.InvalidParam("position", "sequence %q is full: its last position is %d", e.sequence, knowmind.MaxSequencePosition)
		}
		e.position, e.positioned = n, true
		next[e.sequence] = n + 1
	}
	return nil
}

// lastPosition is the highest position stored in a sequence (-1: none).
func lastPosition(ctx context.Context, q querier, sequence string) (int, error) {
	resp, err := q.QueryWithVars(ctx, lastPositionQuery, map[string]string{"$seq": sequence})
	if err != nil {
		return 0, fmt.Errorf("read the last position of sequence %q: %w", sequence, err)
	}
	var out struct {
		Last []struct {
			P *int `json:"Memory.position"`
		} `json:"last"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return 0, fmt.Errorf("read the last position of sequence %q: %w", sequence, err)
	}
	if len(out.Last) > 0 && out.Last[0].P != nil {
		return *out.Last[0].P, nil
	}
	return -1, nil
}

// followers are the chunks of the memories after the n best text candidates of each side in
// their sequences, those not among have: recall scores them by the memory before them
// (search.Weights.Context), and a reply that shares no word with the question is otherwise
// no candidate.
func (t *Tenant) followers(sides [2]search.TextSide, have []uint64, n int) []uint64 {
	if t.text.seq.Len() == 0 {
		return nil // the tenant keeps nothing in sequences
	}
	var best []uint64
	for _, side := range sides {
		refs := make([]uint64, 0, len(side.Scores))
		for u := range side.Scores {
			refs = append(refs, u)
		}
		slices.SortFunc(refs, func(a, b uint64) int {
			if c := cmp.Compare(side.Scores[b], side.Scores[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		best = append(best, refs[:min(n, len(refs))]...)
	}
	after := t.text.seq.After(best)
	if len(after) == 0 {
		return nil
	}
	held := make(map[uint64]bool, len(have))
	for _, u := range have {
		held[u] = true
	}
	var out []uint64
	for _, u := range best {
		for _, f := range after[u] {
			if !held[f] {
				held[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// An implicit sequence is one the service derived for a writer's memories stored without a
// sequence (knowmind.ImplicitSequenceGap). Its key is implicitPrefix, the writer's hash and the
// time it began, so the writer's latest one is its greatest key, found through the exact index
// on Memory.sequence within the lookback (a bounded range of keys).
const implicitPrefix = "implicit "

// implicitStamp writes the time an implicit sequence began: fixed width, so keys sort by time.
const implicitStamp = "20060102T150405.000000000Z"

// latestImplicitQuery reads the writer's latest implicit sequence begun within the lookback and
// its last member's place and time.
const latestImplicitQuery = `query q($lo: string, $hi: string) {
  s as var(func: between(Memory.sequence, $lo, $hi), orderdesc: Memory.sequence, first: 1)
  seq(func: uid(s)) { Memory.sequence }
}`

const lastMemberQuery = `query q($seq: string) {
  last(func: eq(Memory.sequence, $seq), orderdesc: Memory.position, first: 1) { Memory.position Memory.valid_from }
}`

// implicitSequence places e, stored by writer without a sequence, in the writer's implicit
// sequence: after its last memory when e's time (occurred_at, else now) lies within the gap of
// that memory's, else at the start of a new one. Two stores of one writer at the same moment can
// take the same place, as in placeInSequences.
func (t *Tenant) implicitSequence(ctx context.Context, q querier, e *entry, writer string, now time.Time) error {
	if e.sequence != "" || writer == "" {
		return nil
	}
	now = now.UTC()
	at := e.at
	if at.IsZero() {
		at = now
	}
	prefix := implicitWriter(writer)
	vars := map[string]string{"$lo": prefix + now.Add(-knowmind.ImplicitSequenceLookback).Format(implicitStamp), "$hi": prefix + "~"}
	resp, err := q.QueryWithVars(ctx, latestImplicitQuery, vars)
	if err != nil {
		return fmt.Errorf("read the writer's implicit sequence: %w", err)
	}
	var latest struct {
		Seq []struct {
			Sequence string `json:"Memory.sequence"`
		} `json:"seq"`
	}
	if err := json.Unmarshal(resp.Json, &latest); err != nil {
		return fmt.Errorf("read the writer's implicit sequence: %w", err)
	}
	if len(latest.Seq) > 0 {
		key := latest.Seq[0].Sequence
		resp, err := q.QueryWithVars(ctx, lastMemberQuery, map[string]string{"$seq": key})
		if err != nil {
			return fmt.Errorf("read the last memory of sequence %q: %w", key, err)
		}
		var last struct {
			Last []struct {
				Position  *int       `json:"Memory.position"`
				ValidFrom *time.Time `json:"Memory.valid_from"`
			} `json:"last"`
		}
		if err := json.Unmarshal(resp.Json, &last); err != nil {
			return fmt.Errorf("read the last memory of sequence %q: %w", key, err)
		}
		if len(last.Last) > 0 && last.Last[0].Position != nil && last.Last[0].ValidFrom != nil &&
			*last.Last[0].Position < knowmind.MaxSequencePosition &&
			absDuration(at.Sub(*last.Last[0].ValidFrom)) <= knowmind.ImplicitSequenceGap {
			e.sequence, e.position, e.positioned = key, *last.Last[0].Position+1, true
			return nil
		}
	}
	e.sequence, e.position, e.positioned = implicitKey(writer, now), 0, true
	return nil
}

// sequenceWriter is whose implicit sequence a memory stored by in joins: its writer's in its
// MCP session, so that one token's two conversations at once are two sequences, not one
// interleaved; without a session the writer's own. Empty: none.
func sequenceWriter(in knowmind.StoreMemoryInput) string {
	if in.Writer == "" || in.Session == "" {
		return in.Writer
	}
	return in.Writer + "\x00session " + in.Session
}

// implicitWriter is the start of the keys of writer's implicit sequences.
func implicitWriter(writer string) string {
	sum := sha256.Sum256([]byte(writer))
	return implicitPrefix + hex.EncodeToString(sum[:6]) + " "
}

// implicitKey is the key of writer's implicit sequence begun at began.
func implicitKey(writer string, began time.Time) string {
	return implicitWriter(writer) + began.UTC().Format(implicitStamp)
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// implicitSequences places the records of a store_memories batch whose inputs name a writer and
// no sequence in the writer's implicit sequence (in its session: sequenceWriter), in the
// batch's order: the first as a single store would be placed (implicitSequence), each next one after it when its time lies within the
// gap of the one before, else at the start of a new one. Their positions are then appended by
// placeInSequences.
func (t *Tenant) implicitSequences(ctx context.Context, ins []knowmind.StoreMemoryInput, recs []knowmind.Record, now time.Time) error {
	type chain struct {
		key  string
		last time.Time
	}
	chains := map[string]*chain{}
	fresh := 0 // keys begun in this batch, one nanosecond apart
	for i, in := range ins {
		if in.Writer == "" || strings.TrimSpace(in.Sequence) != "" || in.Position != nil {
			continue
		}
		at := now.UTC()
		if in.OccurredAt != nil {
			at = *in.OccurredAt
		}
		writer := sequenceWriter(in)
		c := chains[writer]
		switch {
		case c == nil:
			e := &entry{at: at}
			if err := t.implicitSequence(ctx, t.dg.NewReadOnlyTxn(), e, writer, now); err != nil {
				return err
			}
			c = &chain{key: e.sequence}
			chains[writer] = c
			recs[i].Position = &e.position
			fresh++
		case absDuration(at.Sub(c.last)) > knowmind.ImplicitSequenceGap:
			c.key = implicitKey(writer, now.Add(time.Duration(fresh)))
			recs[i].Position = new(0)
			fresh++
		}
		c.last = at
		recs[i].Sequence = c.key
	}
	return nil
}
