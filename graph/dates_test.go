package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// Issue 37: the times a memory's text names relative to when it was said are resolved at
// write time against its occurred_at and kept as Memory.dates: shown by get and explore,
// queried by analysts in DQL, and matched by recall's time signal.
func TestMemoryDatesResolvedAtWrite(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	store := func(content string, at time.Time) string {
		t.Helper()
		res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: content, OccurredAt: &at})
		if err != nil {
			t.Fatal(err)
		}
		return res.MemoryID
	}
	// Said on Sunday 21 May 2023: two weeks before was the 7th; next month is June.
	told := store("Der Zahnarzttermin von Lisa war vor zwei Wochen, die Kontrolle ist nächsten Monat.", time.Date(2023, 5, 21, 9, 0, 0, 0, time.UTC))
	other := store("Der Zahnarzttermin war gut.", time.Date(2023, 5, 14, 9, 0, 0, 0, time.UTC))
	english := store("I went to the support group yesterday.", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))

	m, err := ten.GetMemory(ctx, told)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Time{day(2023, 5, 7), day(2023, 6, 1)}; !equalDays(m.Dates, want) {
		t.Fatalf("dates of %q: %v, want %v", m.Content, m.Dates, want)
	}
	if !m.ValidFrom.Equal(time.Date(2023, 5, 21, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("valid_from %v, want the occurred_at", m.ValidFrom)
	}
	ex, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: english, Hops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Time{day(2023, 5, 7)}; !equalDays(ex.Memory.Dates, want) {
		t.Fatalf("explore's dates: %v, want %v", ex.Memory.Dates, want)
	}
	if m, _ := ten.GetMemory(ctx, other); len(m.Dates) != 0 {
		t.Fatalf("a text naming no day got dates %v", m.Dates)
	}

	// An analyst's DQL: who names 7 May 2023?
	var out struct {
		M []struct {
			ID string `json:"Memory.id"`
		}
	}
	dgraphtest.Query(t, ten, `{ m(func: eq(Memory.dates, "2023-05-07"), orderasc: Memory.id) { Memory.id } }`, nil, &out)
	if len(out.M) != 2 {
		t.Fatalf("eq(Memory.dates, 2023-05-07): %v, want the two memories naming it", out.M)
	}

	// Recall: a question naming the day finds the memory that said "two weeks ago" first,
	// and so does one asking when; without the days the text names, the other one is first.
	for _, q := range []string{"Zahnarzttermin am 7. Mai 2023", "Wann war der Zahnarzttermin?"} {
		res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: q, K: 5, MinScore: knowmind.RecallMinScore})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) < 2 || res.Hits[0].MemoryID != told {
			t.Fatalf("recall %q: %+v, want %s first", q, res.Hits, told)
		}
	}
}

// Memories stored before Memory.dates existed get theirs, resolved against their valid_from,
// when their tenant is first opened by this version.
func TestMemoryDatesBackfill(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 60 { // more than one page of the backfill
		at := time.Date(2023, 5, 8, 12, 0, 0, 0, time.UTC).AddDate(0, 0, i)
		content := "Wir haben gestern telefoniert, Nummer " + at.Format("0102") + "."
		if i%3 == 0 {
			content = "Kein Tag hier, Nummer " + at.Format("0102") + "."
		}
		res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: content, OccurredAt: &at})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MemoryID)
	}
	// As a version before schema 10 left them: no dates, version 9 recorded.
	if _, err := dgraphtest.DG(t, ten).NewTxn().Do(ctx, &api.Request{
		Query: `{ m as var(func: has(Memory.dates))  meta as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{
			{DelNquads: []byte(`uid(m) <Memory.dates> * .`)},
			{SetNquads: []byte(`uid(meta) <Meta.schema_version> "9" .`)},
		},
		CommitNow: true,
	}); err != nil {
		t.Fatal(err)
	}
	if m, _ := ten.GetMemory(ctx, ids[1]); len(m.Dates) != 0 {
		t.Fatalf("dates left: %v", m.Dates)
	}

	reopened := dgraphtest.Reopen(t, name)
	for i, id := range ids {
		m, err := reopened.GetMemory(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var want []time.Time
		if i%3 != 0 {
			want = []time.Time{day(2023, 5, 7).AddDate(0, 0, i)}
		}
		if !equalDays(m.Dates, want) {
			t.Errorf("memory %d %q: dates %v, want %v", i, m.Content, m.Dates, want)
		}
	}
	if v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, reopened)); err != nil || v != schema.Version {
		t.Fatalf("schema version after the backfill: %d, %v", v, err)
	}
}

func equalDays(got, want []time.Time) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			return false
		}
	}
	return true
}
