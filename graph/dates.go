package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/dgo/v240"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/timeq"
)

// Memory.dates holds the days a memory's text names, relative ones ("yesterday", "letzten
// Freitag", "in two weeks") resolved against the memory's own time when it is written
// (package timeq), at most knowmind.MaxMemoryDates. Recall's time signal matches a question's
// date against them as against valid_from; analysts query them in DQL (docs/analysts.md).
// Memories written before the predicate existed get theirs when their tenant is first opened
// by a version that knows it (backfillDates).

// datesSchemaVersion is the tenant schema version that added Memory.dates.
const datesSchemaVersion = 10

// datesBackfillBatch bounds the contents read per round of the one-time backfill (each up to
// knowmind.MaxContentChars).
const datesBackfillBatch = 50

// memoryDates returns the days content names, resolved against at, as Memory.dates values.
func memoryDates(content string, at time.Time) []string {
	days := timeq.Dates(content, at, knowmind.MaxMemoryDates)
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = d.Format(time.RFC3339)
	}
	return out
}

// sortedDates returns dates in time order, UTC (nil when there are none).
func sortedDates(dates []time.Time) []time.Time {
	if len(dates) == 0 {
		return nil
	}
	out := make([]time.Time, len(dates))
	for i, d := range dates {
		out[i] = d.UTC()
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// datesPageQuery pages through the memories by uid (after the last one read).
const datesPageQuery = `query q($after: string) {
  m(func: has(Memory.content), first: %d, after: $after) @filter(NOT has(Memory.dates)) {
    uid Memory.content Memory.valid_from
  }
}`

// backfillDates writes Memory.dates for every memory whose text names a day, resolved against
// its valid_from, and returns how many it wrote. It reads the memories in uid order, so each
// is read once whatever it names.
func backfillDates(ctx context.Context, dg *dgo.Dgraph) (int, error) {
	written, after := 0, "0x0"
	for {
		resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx, fmt.Sprintf(datesPageQuery, datesBackfillBatch), map[string]string{"$after": after})
		if err != nil {
			return written, fmt.Errorf("backfill dates: %w", err)
		}
		var out struct {
			M []struct {
				UID       string    `json:"uid"`
				Content   string    `json:"Memory.content"`
				ValidFrom time.Time `json:"Memory.valid_from"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return written, err
		}
		if len(out.M) == 0 {
			return written, nil
		}
		var set []map[string]any
		for _, m := range out.M {
			if dates := memoryDates(m.Content, m.ValidFrom); len(dates) > 0 {
				set = append(set, map[string]any{"uid": m.UID, "Memory.dates": dates})
			}
		}
		after = out.M[len(out.M)-1].UID
		if len(set) == 0 {
			continue
		}
		if err := commitBackfill(ctx, dg, set); err != nil {
			return written, fmt.Errorf("backfill dates: %w", err)
		}
		written += len(set)
	}
}
