package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Drafts wait for review (knowmind_review_draft). A review records an accept
// or reject in the calibration bucket of the draft's confidence and
// extractor (Calib nodes); the routing thresholds follow the record
// (knowmind.Calibrate). Drafts kept because the extractor's output failed
// validation (a reason is set) teach the calibration nothing. An edit counts
// as a reject for calibration: storing the fact directly would have stored
// the wrong text. A fact capture stored directly that update_fact later
// supersedes counts against its bucket too (supersededCapture).

const captureSettingsKey = "capture"

const thresholdsQuery = `query q($x: string) {
  s(func: eq(CaptureSettings.key, "capture")) { CaptureSettings.store_threshold CaptureSettings.draft_threshold }
  c(func: eq(Calib.extractor, $x)) { Calib.extractor Calib.bucket Calib.accepted Calib.rejected Calib.superseded }
}`

type dgCalib struct {
	UID        string `json:"uid"`
	Extractor  string `json:"Calib.extractor"`
	Bucket     int    `json:"Calib.bucket"`
	Accepted   int    `json:"Calib.accepted"`
	Rejected   int    `json:"Calib.rejected"`
	Superseded int    `json:"Calib.superseded"`
}

// thresholds are the tenant's thresholds for an extractor after calibration,
// and its review record.
func (t *Tenant) thresholds(ctx context.Context, extractor string) (knowmind.Thresholds, []knowmind.CalibrationBucket, error) {
	var out struct {
		S []struct {
			Store *float64 `json:"CaptureSettings.store_threshold"`
			Draft *float64 `json:"CaptureSettings.draft_threshold"`
		}
		C []dgCalib
	}
	if err := t.queryVars(ctx, thresholdsQuery, map[string]string{"$x": extractor}, &out); err != nil {
		return knowmind.Thresholds{}, nil, fmt.Errorf("read capture thresholds: %w", err)
	}
	base := knowmind.Thresholds{Store: knowmind.DefaultStoreThreshold, Draft: knowmind.DefaultDraftThreshold}
	if len(out.S) > 0 && out.S[0].Store != nil && out.S[0].Draft != nil {
		base = knowmind.Thresholds{Store: *out.S[0].Store, Draft: *out.S[0].Draft}
	}
	buckets := map[int]knowmind.CalibrationBucket{}
	var list []knowmind.CalibrationBucket
	for _, c := range out.C {
		b := knowmind.CalibrationBucket{Extractor: c.Extractor, From: float64(c.Bucket) * knowmind.CalibrationBucketWidth,
			Accepted: c.Accepted, Rejected: c.Rejected, Superseded: c.Superseded}
		b.From = float64(int(b.From*100+0.5)) / 100
		buckets[c.Bucket] = b
		list = append(list, b)
	}
	return knowmind.Calibrate(base, buckets), list, nil
}

// Thresholds returns the tenant's base thresholds, and per extractor named
// the calibrated thresholds and review record.
func (t *Tenant) Thresholds(ctx context.Context, extractor string) (base, calibrated knowmind.Thresholds, buckets []knowmind.CalibrationBucket, err error) {
	base, _, err = t.baseThresholds(ctx)
	if err != nil {
		return
	}
	calibrated, buckets, err = t.thresholds(ctx, extractor)
	return
}

func (t *Tenant) baseThresholds(ctx context.Context) (knowmind.Thresholds, string, error) {
	var out struct {
		S []struct {
			UID   string   `json:"uid"`
			Store *float64 `json:"CaptureSettings.store_threshold"`
			Draft *float64 `json:"CaptureSettings.draft_threshold"`
		}
	}
	q := `{ s(func: eq(CaptureSettings.key, "capture")) { uid CaptureSettings.store_threshold CaptureSettings.draft_threshold } }`
	if err := t.queryVars(ctx, q, nil, &out); err != nil {
		return knowmind.Thresholds{}, "", fmt.Errorf("read capture thresholds: %w", err)
	}
	if len(out.S) > 0 && out.S[0].Store != nil && out.S[0].Draft != nil {
		return knowmind.Thresholds{Store: *out.S[0].Store, Draft: *out.S[0].Draft}, out.S[0].UID, nil
	}
	return knowmind.Thresholds{Store: knowmind.DefaultStoreThreshold, Draft: knowmind.DefaultDraftThreshold}, "", nil
}

// SetThresholds sets the tenant's base thresholds (0 < draft <= store <= 1).
func (t *Tenant) SetThresholds(ctx context.Context, th knowmind.Thresholds) error {
	if th.Store <= 0 || th.Store > 1 {
		return knowmind.InvalidParam("store_threshold", "store_threshold must lie in (0, 1]")
	}
	if th.Draft <= 0 || th.Draft > th.Store {
		return knowmind.InvalidParam("draft_threshold", "draft_threshold must lie in (0, store_threshold]")
	}
	nq := fmt.Sprintf(`uid(s) <CaptureSettings.key> %q .
uid(s) <dgraph.type> "CaptureSettings" .
uid(s) <CaptureSettings.store_threshold> "%g" .
uid(s) <CaptureSettings.draft_threshold> "%g" .`, captureSettingsKey, th.Store, th.Draft)
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, &api.Request{
			Query:     `{ s as var(func: eq(CaptureSettings.key, "capture")) }`,
			Mutations: []*api.Mutation{{SetNquads: []byte(nq)}},
		})
		return err
	})
}

const draftFields = `uid Draft.id Draft.text Draft.confidence Draft.status Draft.reason Draft.extractor Draft.source
    Draft.category Draft.span_start Draft.span_end Draft.occurred_at Draft.created_at Draft.reviewed_at Draft.reviewed_by
    Draft.entities (orderasc: Entity.key) { uid Entity.type Entity.id }
    Draft.conflicts_with { uid Memory.id }
    Draft.memory { Memory.id }`

const listDraftsQuery = `query q($status: string, $first: int) {
  d(func: eq(Draft.status, $status), orderdesc: Draft.created_at, first: $first) {
    ` + draftFields + `
  }
}`

const getDraftQuery = `query q($id: string) {
  d(func: eq(Draft.id, $id)) {
    ` + draftFields + `
  }
}`

type dgDraft struct {
	UID        string     `json:"uid"`
	ID         string     `json:"Draft.id"`
	Text       string     `json:"Draft.text"`
	Confidence float64    `json:"Draft.confidence"`
	Status     string     `json:"Draft.status"`
	Reason     string     `json:"Draft.reason"`
	Extractor  string     `json:"Draft.extractor"`
	Source     string     `json:"Draft.source"`
	Category   string     `json:"Draft.category"`
	SpanStart  int        `json:"Draft.span_start"`
	SpanEnd    int        `json:"Draft.span_end"`
	OccurredAt *time.Time `json:"Draft.occurred_at"`
	CreatedAt  time.Time  `json:"Draft.created_at"`
	ReviewedAt *time.Time `json:"Draft.reviewed_at"`
	ReviewedBy string     `json:"Draft.reviewed_by"`
	Entities   []dgEntity `json:"Draft.entities"`
	Conflicts  []dgMemory `json:"Draft.conflicts_with"`
	Memory     *dgMemory  `json:"Draft.memory"`
}

func (d dgDraft) domain() knowmind.Draft {
	out := knowmind.Draft{ID: d.ID, Text: d.Text, Confidence: d.Confidence, Status: d.Status, Reason: d.Reason,
		Extractor: d.Extractor, Source: d.Source, Category: d.Category, Entities: []knowmind.EntityRef{},
		Span: knowmind.Span{Start: d.SpanStart, End: d.SpanEnd}, CreatedAt: d.CreatedAt, ReviewedAt: d.ReviewedAt,
		ReviewedBy: d.ReviewedBy}
	for _, e := range d.Entities {
		out.Entities = append(out.Entities, e.ref())
	}
	for _, m := range d.Conflicts {
		out.ConflictsWith = append(out.ConflictsWith, m.ID)
	}
	if d.Memory != nil {
		out.MemoryID = d.Memory.ID
	}
	return out
}

// ListDrafts returns up to limit drafts of a status, newest first.
func (t *Tenant) ListDrafts(ctx context.Context, status string, limit int) ([]knowmind.Draft, error) {
	var out struct{ D []dgDraft }
	if err := t.queryVars(ctx, listDraftsQuery, map[string]string{"$status": status, "$first": strconv.Itoa(limit)}, &out); err != nil {
		return nil, fmt.Errorf("list drafts: %w", err)
	}
	drafts := make([]knowmind.Draft, 0, len(out.D))
	for _, d := range out.D {
		drafts = append(drafts, d.domain())
	}
	return drafts, nil
}

func readDraft(ctx context.Context, q querier, id string) (dgDraft, error) {
	resp, err := q.QueryWithVars(ctx, getDraftQuery, map[string]string{"$id": id})
	if err != nil {
		return dgDraft{}, fmt.Errorf("read draft: %w", err)
	}
	var out struct{ D []dgDraft }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return dgDraft{}, err
	}
	if len(out.D) == 0 {
		return dgDraft{}, knowmind.Errorf(knowmind.ENOTFOUND, "draft %q not found", id)
	}
	d := out.D[0]
	if d.Status != knowmind.DraftOpen {
		e := knowmind.Errorf(knowmind.ECONFLICT, "draft %q is already %s", id, d.Status)
		if d.Memory != nil {
			e.Data = map[string]any{"memory_id": d.Memory.ID}
		}
		return dgDraft{}, e
	}
	return d, nil
}

// ReviewDraft accepts, rejects or edits-then-accepts an open draft. An
// accepted draft becomes a memory (chunked, embedded, with its entities, the
// extractor's confidence and the reviewer and time as provenance) and, when
// it contradicted current memories, is linked CONTRADICTS to them. Errors:
// ENOTFOUND, ECONFLICT when the draft was already reviewed (also by a
// concurrent review), EINVALID for a bad action or edit text.
func (t *Tenant) ReviewDraft(ctx context.Context, in knowmind.ReviewInput) (knowmind.ReviewResult, error) {
	id, err := checkText("draft_id", in.DraftID, knowmind.MaxIDChars, true)
	if err != nil {
		return knowmind.ReviewResult{}, err
	}
	reviewer, err := checkText("reviewer", in.Reviewer, knowmind.MaxReviewerChars, false)
	if err != nil {
		return knowmind.ReviewResult{}, err
	}
	switch in.Action {
	case knowmind.ReviewAccept, knowmind.ReviewReject:
	case knowmind.ReviewEdit:
		if _, err := checkText("text", in.Text, knowmind.MaxFactChars, true); err != nil {
			return knowmind.ReviewResult{}, err
		}
	default:
		return knowmind.ReviewResult{}, knowmind.InvalidParam("action", "action must be one of accept, reject, edit")
	}
	d, err := readDraft(ctx, t.dg.NewReadOnlyTxn(), id)
	if err != nil {
		return knowmind.ReviewResult{}, err
	}
	res := knowmind.ReviewResult{DraftID: id, Status: knowmind.DraftAccepted}
	var e *entry
	if in.Action == knowmind.ReviewReject {
		res.Status = knowmind.DraftRejected
	} else {
		text := d.Text
		if in.Action == knowmind.ReviewEdit {
			text = strings.TrimSpace(in.Text)
		}
		e = newEntry(knowmind.KindMemory, "", text)
		e.memoryType, e.source, e.category = knowmind.MemorySemantic, d.Source, d.Category
		for _, ent := range d.Entities {
			e.entityRefs = append(e.entityRefs, knowmind.EntityRef{Type: ent.Type, ID: ent.ID})
		}
		if err := e.split(); err != nil {
			return knowmind.ReviewResult{}, err
		}
		if err := t.embed(ctx, e); err != nil {
			t.c.log.Error("review draft: embedding failed", "tenant", t.Name, "draft", id, "err", err)
			return knowmind.ReviewResult{}, knowmind.Internal(knowmind.ReasonIngestFailed, "the accepted fact could not be indexed; the draft is unchanged")
		}
		res.MemoryID = e.id
	}
	accepted := in.Action == knowmind.ReviewAccept
	learn := d.Reason == ""
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		d, err := readDraft(ctx, txn, id) // decides against a concurrent review
		if err != nil {
			return err
		}
		now := nowString()
		// Re-setting Draft.id (@upsert) makes concurrent reviews of this draft conflict.
		draft := map[string]any{"uid": d.UID, "Draft.id": d.ID, "Draft.status": res.Status, "Draft.reviewed_at": now}
		setIf(draft, "Draft.reviewed_by", reviewer)
		nodes := []any{draft}
		if e != nil {
			if d.OccurredAt != nil {
				e.at = *d.OccurredAt
			}
			m := e.node("m", now, knowmind.StatusIndexed, "")
			var refs []map[string]string
			for _, ent := range d.Entities {
				refs = append(refs, map[string]string{"uid": ent.UID})
			}
			setEngineFields(m, d.Confidence, d.Extractor, d.Category, refs)
			setIf(m, "Memory.reviewed_by", reviewer)
			m["Memory.reviewed_at"] = now
			draft["Draft.memory"] = map[string]string{"uid": "_:m"}
			nodes = append(nodes, m)
		}
		if learn {
			calib, err := bumpCalibration(ctx, txn, d.Extractor, d.Confidence, accepted)
			if err != nil {
				return err
			}
			nodes = append(nodes, calib)
		}
		body, err := json.Marshal(nodes)
		if err != nil {
			return err
		}
		resp, err := txn.Mutate(ctx, &api.Mutation{SetJson: body})
		if err != nil {
			return err
		}
		if e != nil {
			e.committed("m", resp.Uids)
		}
		return nil
	})
	if err != nil {
		if knowmind.AsError(err) != nil {
			return knowmind.ReviewResult{}, err
		}
		t.c.log.Error("review draft: write failed", "tenant", t.Name, "draft", id, "err", err)
		return knowmind.ReviewResult{}, knowmind.Internal(knowmind.ReasonIngestFailed, "the review could not be written; the draft is unchanged")
	}
	if e != nil {
		res.PMMatches = t.afterWrite(ctx, e).pmMatches()
		for _, m := range d.Conflicts {
			t.linkContradiction(ctx, e.id, m.ID, "the accepted draft contradicted it")
		}
	}
	res.Thresholds, _, err = t.thresholds(ctx, d.Extractor)
	return res, err
}

const calibQuery = `query q($key: string) { c(func: eq(Calib.key, $key)) { uid Calib.accepted Calib.rejected Calib.superseded } }`

// supersededCapture records that update_fact superseded a fact capture had
// stored without review: for calibration a superseded direct store counts
// like a rejected draft, so a bucket whose direct stores keep being corrected
// falls back below the promotion rate and its facts become drafts again.
// Best effort: a failure is logged, the update stands.
func (t *Tenant) supersededCapture(ctx context.Context, target dgMemory) {
	if target.Extractor == "" || target.ReviewedAt != nil {
		return
	}
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		calib, err := bumpCalibrationBy(ctx, txn, target.Extractor, target.Confidence, "superseded")
		if err != nil {
			return err
		}
		body, err := json.Marshal(calib)
		if err != nil {
			return err
		}
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
	if err != nil {
		t.c.log.Warn("calibration: recording a superseded capture failed", "tenant", t.Name, "id", target.ID, "err", err)
	}
}

// bumpCalibration returns the Calib node of the review's bucket with one more
// accept or reject, read in txn so concurrent reviews conflict on it.
func bumpCalibration(ctx context.Context, txn *dgo.Txn, extractor string, confidence float64, accepted bool) (map[string]any, error) {
	if accepted {
		return bumpCalibrationBy(ctx, txn, extractor, confidence, "accepted")
	}
	return bumpCalibrationBy(ctx, txn, extractor, confidence, "rejected")
}

// bumpCalibrationBy adds one to a count (accepted, rejected, superseded) of a bucket.
func bumpCalibrationBy(ctx context.Context, txn *dgo.Txn, extractor string, confidence float64, count string) (map[string]any, error) {
	bucket := knowmind.Bucket(confidence)
	key := fmt.Sprintf("%s/%d", extractor, bucket)
	resp, err := txn.QueryWithVars(ctx, calibQuery, map[string]string{"$key": key})
	if err != nil {
		return nil, err
	}
	var out struct{ C []dgCalib }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, err
	}
	c := dgCalib{UID: "_:calib"}
	if len(out.C) > 0 {
		c = out.C[0]
	}
	switch count {
	case "accepted":
		c.Accepted++
	case "rejected":
		c.Rejected++
	default:
		c.Superseded++
	}
	return map[string]any{"uid": c.UID, "dgraph.type": "Calib", "Calib.key": key, "Calib.extractor": extractor,
		"Calib.bucket": bucket, "Calib.accepted": c.Accepted, "Calib.rejected": c.Rejected, "Calib.superseded": c.Superseded}, nil
}
