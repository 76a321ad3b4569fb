package graph

// A memory's place in a sequence (Memory.sequence, Memory.position): a conversation's turns, a
// document's parts, one session's notes, in order. Recall scores a memory with the one before it
// in its sequence too (search.Weights.Context): a reply ("been doing it for 3 years") holds the
// answer while the question's words sit in the turn it answers. The text index holds the
// sequences (textdoc.Sequences) so that recall reads no more from Dgraph for it.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

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
