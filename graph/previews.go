package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
)

// Memory.preview is what recall reads of a candidate instead of its whole
// content (issue 13). Every write of Memory.content writes it too
// (previewOf); memories stored before it existed get theirs when their
// tenant is first opened by a version that knows it (backfillPreviews).

// previewSchemaVersion is the tenant schema version that added Memory.preview.
const previewSchemaVersion = 5

// previewBackfillBatch bounds the contents read per round (each up to
// knowmind.MaxContentChars) of the one-time backfill.
const previewBackfillBatch = 50

func previewOf(content string) string {
	return runes.Truncate(content, knowmind.RecallMaxContentChars)
}

const previewsMissingQuery = `{
  m(func: has(Memory.content), first: %d) @filter(NOT has(Memory.preview)) { uid  Memory.content }
}`

// backfillPreviews writes Memory.preview for every memory without one and
// returns how many it wrote.
func backfillPreviews(ctx context.Context, dg *dgo.Dgraph) (int, error) {
	done := map[string]bool{}
	for {
		resp, err := dg.NewReadOnlyTxn().Query(ctx, fmt.Sprintf(previewsMissingQuery, previewBackfillBatch))
		if err != nil {
			return len(done), fmt.Errorf("backfill previews: %w", err)
		}
		var out struct {
			M []struct {
				UID     string `json:"uid"`
				Content string `json:"Memory.content"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return len(done), err
		}
		if len(out.M) == 0 {
			return len(done), nil
		}
		set := make([]map[string]any, 0, len(out.M))
		for _, m := range out.M {
			if done[m.UID] {
				return len(done), fmt.Errorf("backfill previews: memory %s still has none after it was written", m.UID)
			}
			done[m.UID] = true
			set = append(set, map[string]any{"uid": m.UID, "Memory.preview": previewOf(m.Content)})
		}
		if err := commitBackfill(ctx, dg, set); err != nil {
			return len(done), fmt.Errorf("backfill previews: %w", err)
		}
	}
}

// commitBackfill writes one batch of a one-time backfill (previews, revision text, dates) in its
// own transaction, so an interrupted backfill keeps what it committed and the next open goes on.
func commitBackfill(ctx context.Context, dg *dgo.Dgraph, set []map[string]any) error {
	body, err := json.Marshal(set)
	if err != nil {
		return err
	}
	return runTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, &api.Request{Mutations: []*api.Mutation{{SetJson: body}}})
		return err
	})
}
