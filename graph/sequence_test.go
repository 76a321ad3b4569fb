package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
	"github.com/knowmind/knowmind/search"
)

// chatTurns is a conversation in which the reply holds the answer and the question the topic.
var chatTurns = []struct{ speaker, text string }{
	{"Melanie", "I finally repainted the garden fence last weekend."},
	{"Caroline", "Nice! The blue looks great in the photos."},
	{"Melanie", "How long have you been doing pottery, Caroline?"},
	{"Caroline", "Three years now, since I finished college."},
	{"Melanie", "My kids want to visit the aquarium next month."},
	{"Caroline", "They will love the jellyfish tank."},
}

const chatQuestion = "How long has Caroline been doing pottery?"

// storeChat stores chatTurns as one sequence, turn i at position i (the positions given, or
// appended when append is set), and returns the memory ids in order.
func storeChat(t *testing.T, ctx context.Context, ten *graph.Tenant, appended bool) []string {
	t.Helper()
	var ids []string
	for i, turn := range chatTurns {
		in := knowmind.StoreMemoryInput{Title: turn.speaker, Content: turn.text, Sequence: "chat 2023-05-08"}
		if !appended {
			in.Position = &i
		}
		res, err := ten.StoreMemory(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MemoryID)
	}
	return ids
}

// A reply that shares no word with the question is found by the turn before it (the context
// signal) right after it, also after a restart that reads the index from its snapshot; without
// the signal it falls behind the other turns.
func TestSequenceContextFindsTheReply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	first := openIndexClient(t, dir, bm25.Analysis{})
	name := dgraphtest.TenantName(t)
	ten, err := first.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	ids := storeChat(t, ctx, ten, false)
	question, reply := ids[2], ids[3]
	q := knowmind.RecallQuery{Query: chatQuestion, K: 5, MinScore: knowmind.RecallMinScore}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	on := hitIDs(f.recall(q))
	without := hitIDs(f.recallWith(q, with(func(_ *search.Plan, w *search.Weights) { w.Context = 0 })))
	t.Logf("with context: %v\nwithout: %v", on, without)
	if len(on) < 2 || on[0] != question || on[1] != reply {
		t.Fatalf("with the context signal: %v, want the question %s then the reply %s", on, question, reply)
	}
	if at := slices.Index(without, reply); at >= 0 && at < 2 {
		t.Fatalf("without the context signal the reply is still second: %v", without)
	}
	first.Close() // writes the snapshot

	run := snapshotRun{t: t, dir: dir, name: name}
	res, loads := run.recall(chatQuestion, bm25.Analysis{})
	if loads[graph.SnapshotLoaded] != 1 || !slices.Contains(hitIDs(res), reply) {
		t.Fatalf("from the snapshot: loads %v, hits %v, want the reply %s", loads, hitIDs(res), reply)
	}
}

// Places in a sequence: appended in order when no position is given (store_memory and a
// store_memories batch), kept as given, carried to a fact's new version, shown by get; bad
// places are refused with -32602 before anything is written.
func TestSequencePlaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ten := dgraphtest.NewTenant(t)
	ids := storeChat(t, ctx, ten, true)
	batch := []knowmind.StoreMemoryInput{
		{Content: "Seventh turn, appended by a batch.", Sequence: "chat 2023-05-08"},
		{Content: "Eighth turn, after it.", Sequence: "chat 2023-05-08"},
		{Content: "A turn of another chat at 40.", Sequence: "chat 2023-06-01", Position: new(40)},
		{Content: "And the one after it.", Sequence: "chat 2023-06-01"},
	}
	items, err := ten.StoreMemories(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	want := []struct {
		seq string
		pos int
	}{{"chat 2023-05-08", 0}, {"chat 2023-05-08", 1}, {"chat 2023-05-08", 2}, {"chat 2023-05-08", 3},
		{"chat 2023-05-08", 4}, {"chat 2023-05-08", 5}, {"chat 2023-05-08", 6}, {"chat 2023-05-08", 7},
		{"chat 2023-06-01", 40}, {"chat 2023-06-01", 41}}
	for i, id := range ids {
		m, err := ten.GetMemory(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Sequence != want[i].seq || m.Position == nil || *m.Position != want[i].pos {
			t.Errorf("memory %d %q: place %q %v, want %q %d", i, m.Content, m.Sequence, m.Position, want[i].seq, want[i].pos)
		}
	}

	upd, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: ids[3], NewTitle: "Caroline",
		NewContent: "Four years now, since I finished college.", UpdateReason: "corrected"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ten.GetMemory(ctx, upd.NewMemoryID); err != nil || m.Sequence != want[3].seq || m.Position == nil || *m.Position != 3 {
		t.Fatalf("new version's place: %q %v, %v", m.Sequence, m.Position, err)
	}

	long := make([]byte, knowmind.MaxSequenceChars+1)
	for i := range long {
		long[i] = 'x'
	}
	for _, bad := range []knowmind.StoreMemoryInput{
		{Content: "A place without a sequence.", Position: new(3)},
		{Content: "A negative place.", Sequence: "chat", Position: new(-1)},
		{Content: "Too far.", Sequence: "chat", Position: new(knowmind.MaxSequencePosition + 1)},
		{Content: "A key too long.", Sequence: string(long)},
	} {
		_, err := ten.StoreMemory(ctx, bad)
		var kerr *knowmind.Error
		if !errors.As(err, &kerr) || kerr.Code != knowmind.EINVALID {
			t.Errorf("%q: %v, want an invalid parameter", bad.Content, err)
		}
	}
	if items, err := ten.StoreMemories(ctx, []knowmind.StoreMemoryInput{{Content: "Fine."}, {Content: "Not fine.", Position: new(1)}}); err != nil ||
		items[0].Status != knowmind.ItemIndexed || items[1].Status != knowmind.ItemFailed {
		t.Fatalf("batch with one bad place: %+v, %v", items, err)
	}
}

// A store of schema 10 (before Memory.sequence) opens as 11 and takes places in sequences;
// its memories stay in none.
func TestSequenceSchemaOnAnOldStore(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	old, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Stored before sequences existed."})
	if err != nil {
		t.Fatal(err)
	}
	// As a version before schema 11 left it: version 10 recorded, no such predicates.
	for _, pred := range []string{"Memory.sequence", "Memory.position"} {
		if err := dgraphtest.DG(t, ten).Alter(ctx, &api.Operation{DropAttr: pred}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dgraphtest.DG(t, ten).NewTxn().Do(ctx, &api.Request{
		Query:     `{ meta as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{SetNquads: []byte(`uid(meta) <Meta.schema_version> "10" .` + "\n" + `uid(meta) <Meta.schema_sha> "" .`)}},
		CommitNow: true,
	}); err != nil {
		t.Fatal(err)
	}
	reopened := dgraphtest.Reopen(t, name)
	if v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, reopened)); err != nil || v != schema.Version {
		t.Fatalf("schema version after opening: %d, %v", v, err)
	}
	if m, err := reopened.GetMemory(ctx, old.MemoryID); err != nil || m.Sequence != "" || m.Position != nil {
		t.Fatalf("old memory: place %q %v, %v", m.Sequence, m.Position, err)
	}
	for i := range 2 {
		res, err := reopened.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: fmt.Sprintf("Turn %d of a new chat.", i), Sequence: "new chat"})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := reopened.GetMemory(ctx, res.MemoryID); err != nil || m.Position == nil || *m.Position != i {
			t.Fatalf("turn %d: place %v, %v", i, m.Position, err)
		}
	}
}

// A writer's memories stored without a sequence, each within the gap of the one before, form
// one implicit sequence (shown by get), so the context signal finds the reply; a pause longer
// than the gap, another writer, an explicit sequence or no writer leave it.
func TestSequenceImplicit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ten := dgraphtest.NewTenant(t)
	said := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	store := func(in knowmind.StoreMemoryInput, at time.Time) knowmind.Memory {
		t.Helper()
		in.OccurredAt = &at
		res, err := ten.StoreMemory(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ten.GetMemory(ctx, res.MemoryID)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var turns []knowmind.Memory
	for i, turn := range chatTurns {
		turns = append(turns, store(knowmind.StoreMemoryInput{Title: turn.speaker, Content: turn.text, Writer: "token-a"},
			said.Add(time.Duration(i)*time.Minute)))
	}
	key := turns[0].Sequence
	if !strings.HasPrefix(key, "implicit ") {
		t.Fatalf("first turn's sequence %q, want an implicit one", key)
	}
	for i, m := range turns {
		if m.Sequence != key || m.Position == nil || *m.Position != i {
			t.Errorf("turn %d: %q %v, want %q %d", i, m.Sequence, m.Position, key, i)
		}
	}
	later := store(knowmind.StoreMemoryInput{Content: "Back after lunch.", Writer: "token-a"}, said.Add(5*time.Minute+knowmind.ImplicitSequenceGap+time.Second))
	other := store(knowmind.StoreMemoryInput{Content: "Another agent's note.", Writer: "token-b"}, said.Add(6*time.Minute))
	explicit := store(knowmind.StoreMemoryInput{Content: "A document's part.", Sequence: "doc", Writer: "token-a"}, said.Add(6*time.Minute))
	none := store(knowmind.StoreMemoryInput{Content: "Imported without a writer."}, said.Add(6*time.Minute))
	next := store(knowmind.StoreMemoryInput{Content: "Right after lunch, more.", Writer: "token-a"}, said.Add(10*time.Minute+knowmind.ImplicitSequenceGap))
	if later.Sequence == key || !strings.HasPrefix(later.Sequence, "implicit ") || *later.Position != 0 {
		t.Errorf("after a pause: %q %v, want a new implicit sequence", later.Sequence, later.Position)
	}
	if next.Sequence != later.Sequence || *next.Position != 1 {
		t.Errorf("within the gap of the new one: %q %v, want %q 1", next.Sequence, next.Position, later.Sequence)
	}
	if other.Sequence == key || other.Sequence == later.Sequence || !strings.HasPrefix(other.Sequence, "implicit ") {
		t.Errorf("another writer: %q", other.Sequence)
	}
	if explicit.Sequence != "doc" || none.Sequence != "" {
		t.Errorf("explicit %q, without a writer %q", explicit.Sequence, none.Sequence)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	on := hitIDs(f.recall(knowmind.RecallQuery{Query: chatQuestion, K: 5, MinScore: knowmind.RecallMinScore}))
	if len(on) < 2 || on[0] != turns[2].ID || on[1] != turns[3].ID {
		t.Fatalf("context over the implicit sequence: %v, want the question %s then the reply %s", on, turns[2].ID, turns[3].ID)
	}
}

// A store_memories batch continues its writer's implicit sequence item by item, in order, and
// begins a new one after a pause longer than the gap.
func TestSequenceImplicitBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ten := dgraphtest.NewTenant(t)
	said := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := said.Add(d); return &x }
	first, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Opening turn.", Writer: "token-c", OccurredAt: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	items, err := ten.StoreMemories(ctx, []knowmind.StoreMemoryInput{
		{Content: "Second turn.", Writer: "token-c", OccurredAt: at(time.Minute)},
		{Content: "Third turn.", Writer: "token-c", OccurredAt: at(2 * time.Minute)},
		{Content: "Explicit.", Writer: "token-c", Sequence: "doc", OccurredAt: at(3 * time.Minute)},
		{Content: "Next morning.", Writer: "token-c", OccurredAt: at(20 * time.Hour)},
		{Content: "Next morning, more.", Writer: "token-c", OccurredAt: at(20*time.Hour + time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{first.MemoryID}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	var got []knowmind.Memory
	for _, id := range ids {
		m, err := ten.GetMemory(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	key, next := got[0].Sequence, got[4].Sequence
	if !strings.HasPrefix(key, "implicit ") || !strings.HasPrefix(next, "implicit ") || key == next || got[3].Sequence != "doc" {
		t.Fatalf("sequences %q %q %q %q %q %q", got[0].Sequence, got[1].Sequence, got[2].Sequence, got[3].Sequence, got[4].Sequence, got[5].Sequence)
	}
	for i, want := range []struct {
		seq string
		pos int
	}{{key, 0}, {key, 1}, {key, 2}, {"doc", 0}, {next, 0}, {next, 1}} {
		if got[i].Sequence != want.seq || got[i].Position == nil || *got[i].Position != want.pos {
			t.Errorf("memory %d %q: %q %v, want %q %d", i, got[i].Content, got[i].Sequence, got[i].Position, want.seq, want.pos)
		}
	}
}
