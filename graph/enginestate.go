package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// What the memory engine keeps besides facts, goals and drafts, in knowmind export / import
// (docs/bulk.md): every entity with its name, former names (Entity.aliases) and creation time,
// the review counts of every calibration bucket, and the tenant's capture thresholds. Export
// writes them last; import writes them in the relations phase, after the memories (whose
// engine data may have created an entity by the name a fact gave it: the record sets the
// entity's own). Each is written as the record says — set, not added to — so an interrupted
// import repeats it harmlessly, and a tenant moved between cells calibrates as before.

const exportEntitiesQuery = `query q($after: string, $n: int) {
  m(func: has(Entity.key), first: $n, after: $after) { uid Entity.type Entity.id Entity.name Entity.aliases Entity.created_at }
}`

const exportCalibrationQuery = `query q($after: string, $n: int) {
  m(func: has(Calib.key), first: $n, after: $after) { uid Calib.extractor Calib.bucket Calib.accepted Calib.rejected Calib.superseded }
}`

// exportEngineState emits every entity, then every calibration bucket, then the capture
// thresholds when the tenant set its own.
func (t *Tenant) exportEngineState(ctx context.Context, emit func(knowmind.Record) error) error {
	err := t.pageMemories(ctx, exportEntitiesQuery, func(raw json.RawMessage) error {
		var e struct {
			dgEntity
			CreatedAt time.Time `json:"Entity.created_at"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return err
		}
		aliases := slices.Clone(e.Aliases)
		slices.Sort(aliases)
		return emit(knowmind.Record{Type: knowmind.RecordEntity, Entity: &knowmind.EntityRecord{
			Type: e.Type, ID: e.ID, Name: e.Name, Aliases: aliases, CreatedAt: e.CreatedAt.UTC()}})
	})
	if err != nil {
		return fmt.Errorf("export entities: %w", err)
	}
	err = t.pageMemories(ctx, exportCalibrationQuery, func(raw json.RawMessage) error {
		var c dgCalib
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		return emit(knowmind.Record{Type: knowmind.RecordCalibration, Calibration: &knowmind.CalibrationRecord{
			Extractor: c.Extractor, Bucket: c.Bucket, Accepted: c.Accepted, Rejected: c.Rejected, Superseded: c.Superseded}})
	})
	if err != nil {
		return fmt.Errorf("export calibration: %w", err)
	}
	th, uid, err := t.baseThresholds(ctx)
	if err != nil {
		return err
	}
	if uid == "" {
		return nil // the defaults: nothing the tenant set
	}
	return emit(knowmind.Record{Type: knowmind.RecordCaptureSettings, CaptureSettings: &knowmind.CaptureSettingsRecord{
		StoreThreshold: th.Store, DraftThreshold: th.Draft}})
}

// writeEngineState writes the entity, calibration and capture_settings records of recs at
// positions idx, setting their results: stored, or failed (invalid).
func (t *Tenant) writeEngineState(ctx context.Context, recs []knowmind.Record, idx []int, results []knowmind.ItemResult) error {
	for _, i := range idx {
		r := recs[i]
		var err error
		changed := false
		switch r.Type {
		case knowmind.RecordEntity:
			if err = validRecord(r.Entity, "entity"); err == nil {
				changed, err = t.setEntity(ctx, *r.Entity)
				results[i].ID = entityKey(r.Entity.Type, r.Entity.ID)
			}
		case knowmind.RecordCalibration:
			if err = validRecord(r.Calibration, "calibration"); err == nil {
				changed, err = t.setCalibration(ctx, *r.Calibration)
			}
		case knowmind.RecordCaptureSettings:
			if r.CaptureSettings == nil {
				err = knowmind.InvalidParam("capture_settings", "a capture_settings record holds its object in capture_settings")
				break
			}
			want := knowmind.Thresholds{Store: r.CaptureSettings.StoreThreshold, Draft: r.CaptureSettings.DraftThreshold}
			var have knowmind.Thresholds
			var uid string
			if have, uid, err = t.baseThresholds(ctx); err == nil && (uid == "" || have != want) {
				changed, err = true, t.SetThresholds(ctx, want)
			}
		}
		if err != nil {
			if knowmind.AsError(err) == nil {
				return err // Dgraph's: the batch fails and is retried
			}
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err}
			continue
		}
		results[i].Status = knowmind.ItemUnchanged
		if changed {
			results[i].Status = knowmind.ItemStored
		}
	}
	return nil
}

// setEntity creates the entity or sets its name, former names and creation time to e's
// (changed false: it held them already).
func (t *Tenant) setEntity(ctx context.Context, e knowmind.EntityRecord) (changed bool, err error) {
	key := entityKey(e.Type, e.ID)
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, `query q($k: string) { e(func: eq(Entity.key, $k)) { uid Entity.name Entity.aliases Entity.created_at } }`,
			map[string]string{"$k": key})
		if err != nil {
			return err
		}
		var out struct {
			E []struct {
				dgEntity
				CreatedAt time.Time `json:"Entity.created_at"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.E) > 0 {
			have := out.E[0]
			aliases, want := slices.Clone(have.Aliases), slices.Clone(e.Aliases)
			slices.Sort(aliases)
			slices.Sort(want)
			if have.Name == e.Name && slices.Equal(aliases, want) && have.CreatedAt.Equal(e.CreatedAt) {
				changed = false
				return nil
			}
		}
		changed = true
		node := map[string]any{"uid": "_:e", "dgraph.type": "Entity", "Entity.key": key, "Entity.type": e.Type, "Entity.id": e.ID,
			"Entity.name": e.Name}
		if !e.CreatedAt.IsZero() {
			node["Entity.created_at"] = formatTime(e.CreatedAt)
		}
		if len(out.E) > 0 {
			uid := out.E[0].UID
			node["uid"] = uid
			del := fmt.Sprintf("<%s> <Entity.aliases> * .", uid)
			if e.CreatedAt.IsZero() { // an entity from before creation times were kept: none here either
				del += fmt.Sprintf("\n<%s> <Entity.created_at> * .", uid)
			}
			if _, err := txn.Mutate(ctx, &api.Mutation{DelNquads: []byte(del)}); err != nil {
				return err
			}
		}
		if len(e.Aliases) > 0 {
			node["Entity.aliases"] = e.Aliases
		}
		body, _ := json.Marshal(node)
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
	return changed, err
}

// setCalibration sets one bucket's counts to c's (changed false: it held them already).
func (t *Tenant) setCalibration(ctx context.Context, c knowmind.CalibrationRecord) (changed bool, err error) {
	key := fmt.Sprintf("%s/%d", c.Extractor, c.Bucket)
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, calibQuery, map[string]string{"$key": key})
		if err != nil {
			return err
		}
		var out struct{ C []dgCalib }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		uid := "_:calib"
		if len(out.C) > 0 {
			have := out.C[0]
			if have.Accepted == c.Accepted && have.Rejected == c.Rejected && have.Superseded == c.Superseded {
				changed = false
				return nil
			}
			uid = have.UID
		}
		changed = true
		body, _ := json.Marshal(map[string]any{"uid": uid, "dgraph.type": "Calib", "Calib.key": key, "Calib.extractor": c.Extractor,
			"Calib.bucket": c.Bucket, "Calib.accepted": c.Accepted, "Calib.rejected": c.Rejected, "Calib.superseded": c.Superseded})
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
	return changed, err
}
