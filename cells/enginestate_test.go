package cells_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// What the memory engine keeps besides facts moves with the tenant, record for record (the
// move's verify compares the target's export with the source's): an entity with its former
// names, a calibration bucket's review counts and the tenant's own capture thresholds. In the
// target cell the entity lists its former name and capture calibrates as in the source.
func TestMoveCarriesEngineState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := router()
	tenant := dgraphtest.TenantName(t)
	if err := r.Place(ctx, tenant, "cell-a"); err != nil {
		t.Fatal(err)
	}
	err := r.Write(ctx, tenant, func(ten *graph.Tenant) error {
		if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Lisa", Content: "Lisa leitet das Lager."}); err != nil {
			return err
		}
		return ten.SetThresholds(ctx, knowmind.Thresholds{Store: 0.9, Draft: 0.6})
	})
	if err != nil {
		t.Fatal(err)
	}
	source, err := envs["cell-a"].Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	envs["cell-a"].SetJSON(t, source, []map[string]any{
		{"uid": "_:e", "dgraph.type": "Entity", "Entity.key": "person/lisa-mueller", "Entity.type": "person", "Entity.id": "lisa-mueller",
			"Entity.name": "Lisa Mueller-Schmidt", "Entity.aliases": []string{"Lisa Mueller", "L. Mueller"}, "Entity.created_at": created.Format(time.RFC3339)},
		{"uid": "_:c", "dgraph.type": "Calib", "Calib.key": "rules/15", "Calib.extractor": "rules", "Calib.bucket": 15,
			"Calib.accepted": 3, "Calib.rejected": 1, "Calib.superseded": 2},
	})
	_, wantCal, wantBuckets, err := source.Thresholds(ctx, "rules")
	if err != nil {
		t.Fatal(err)
	}

	rep, err := r.Move(ctx, tenant, "cell-b", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	moved, err := envs["cell-b"].Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, line := range exportOf(t, envs["cell-b"].Client, tenant) {
		for _, typ := range []string{knowmind.RecordEntity, knowmind.RecordCalibration, knowmind.RecordCaptureSettings} {
			if len(line) > 9 && line[:9+len(typ)] == `{"type":"`+typ {
				types[typ]++
			}
		}
	}
	if types[knowmind.RecordEntity] != 1 || types[knowmind.RecordCalibration] != 1 || types[knowmind.RecordCaptureSettings] != 1 {
		t.Errorf("the target's export holds %v, want one entity, calibration and capture_settings record (%d records moved)", types, rep.Records)
	}
	ents, err := moved.ListEntities(ctx, "person", 10)
	if err != nil || len(ents) != 1 || ents[0].Name != "Lisa Mueller-Schmidt" || !slices.Equal(slices.Sorted(slices.Values(ents[0].Aliases)), []string{"L. Mueller", "Lisa Mueller"}) {
		t.Errorf("the entity in the target cell: %+v, %v; want its name and both former names", ents, err)
	}
	base, cal, buckets, err := moved.Thresholds(ctx, "rules")
	if err != nil {
		t.Fatal(err)
	}
	if base != (knowmind.Thresholds{Store: 0.9, Draft: 0.6}) || cal != wantCal || !slices.Equal(buckets, wantBuckets) || len(buckets) != 1 || buckets[0].Superseded != 2 {
		t.Errorf("capture in the target cell: base %+v, calibrated %+v, buckets %+v; want base {0.9 0.6}, %+v, %+v", base, cal, buckets, wantCal, wantBuckets)
	}
}
