package bulk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

func TestWikiLinks(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"See [[Note A]] and [[Note B|the other]].", []string{"Note A", "Note B"}},
		{"[[Folder/Deep Note#Heading]] [[Block^abc]] [[#Local heading]]", []string{"Folder/Deep Note", "Block"}},
		{"![[diagram.png]] ![[Embedded note]] ![[Other.md]]", []string{"Embedded note", "Other.md"}},
		{"`[[inline code]]`\n```\n[[fenced]]\n```\n[[after]]", []string{"after"}},
		{"no links [single] [[unclosed", nil},
	} {
		if got := WikiLinks(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("WikiLinks(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestFrontMatter(t *testing.T) {
	for _, tc := range []struct {
		text, body string
		tags       []string
	}{
		{"---\ntags: [qm, \"#client\"]\nalias: x\n---\nBody", "Body", []string{"qm", "client"}},
		{"---\ntags:\n  - one\n  - two\ntitle: T\n---\n\nBody\n", "\nBody\n", []string{"one", "two"}},
		{"---\ntags: single\n---\nB", "B", []string{"single"}},
		{"No front matter\n---\n", "No front matter\n---\n", nil},
		{"---\nunclosed: yes\nBody", "---\nunclosed: yes\nBody", nil},
	} {
		body, tags := splitFrontMatter(tc.text)
		if body != tc.body || !slices.Equal(tags, tc.tags) {
			t.Errorf("splitFrontMatter(%q) = %q %q, want %q %q", tc.text, body, tags, tc.body, tc.tags)
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// items reads both phases of a source.
func items(t *testing.T, s Source) (entries, relations []Item) {
	t.Helper()
	ctx := context.Background()
	if err := s.Each(ctx, PhaseEntries, func(it Item) error { entries = append(entries, it); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Each(ctx, PhaseRelations, func(it Item) error { relations = append(relations, it); return nil }); err != nil {
		t.Fatal(err)
	}
	return entries, relations
}

// A vault: notes become documents with ids from their paths, links resolve as Obsidian resolves
// them (file name, or path end; the shortest path of several), hidden folders are skipped.
func TestMarkdownVault(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Index.md":             "---\ntags: [home]\n---\n# Index\n\nSee [[Projects/Alpha]], [[beta|Beta]], [[Missing]], [[Index]] and [[Alpha]] again.",
		"Projects/Alpha.md":    "Alpha links back to [[Index#Index]].",
		"Projects/Beta.md":     "Beta.",
		"Archive/Old/Alpha.md": "An older alpha, never the one a bare [[Alpha]] means.",
		".obsidian/skip.md":    "[[Index]]",
		"image.png":            "not a note",
	})
	src, err := OpenMarkdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, relations := items(t, src)
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Where)
		if e.Err != nil || e.Record.Type != knowmind.RecordDocument || e.Record.ID != noteID(e.Where) || e.Record.Source != e.Where {
			t.Errorf("note %s: %+v %v", e.Where, e.Record, e.Err)
		}
	}
	if want := []string{"Archive/Old/Alpha.md", "Index.md", "Projects/Alpha.md", "Projects/Beta.md"}; !slices.Equal(paths, want) {
		t.Fatalf("notes %q, want %q", paths, want)
	}
	index := entries[1].Record
	if index.Title != "Index" || !slices.Equal(index.Tags, []string{"home"}) || strings.Contains(index.Content, "tags:") {
		t.Errorf("Index note %+v", index)
	}
	var got []string
	for _, r := range relations {
		if r.Record.RelType != WikiLinkRelation {
			t.Errorf("relation %+v", r.Record)
		}
		got = append(got, r.Record.From[:8]+"→"+r.Record.To[:8])
	}
	id := func(rel string) string { return noteID(rel)[:8] }
	want := []string{
		id("Archive/Old/Alpha.md") + "→" + id("Projects/Alpha.md"),
		id("Index.md") + "→" + id("Projects/Alpha.md"),
		id("Index.md") + "→" + id("Projects/Beta.md"),
		id("Projects/Alpha.md") + "→" + id("Index.md"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("relations %q, want %q", got, want)
	}
	if src.UnresolvedLinks() != 1 || src.Total() != 8 {
		t.Errorf("unresolved %d, total %d; want 1 and 8", src.UnresolvedLinks(), src.Total())
	}
	// The key follows the content: an edited note is a new import.
	os.WriteFile(filepath.Join(dir, "Projects/Beta.md"), []byte("Beta, edited."), 0o600)
	if again, _ := OpenMarkdown(dir); again.Key() == src.Key() {
		t.Error("editing a note kept the import key")
	}
}

func TestJSONLRecords(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in.jsonl": `{"type":"header","format":"knowmind-jsonl","version":1}
{"type":"relation","from":"a","to":"b","rel_type":"REFERENCES"}
{"type":"memory","id":"a","content":"A"}

{"type":"memory","content":"B","colour":"red"}
not json
{"type":"fact","content":"C"}
{"type":"document","id":"b","title":"B","content":"B doc"}
`})
	src, err := OpenJSONL(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	entries, relations := items(t, src)
	if src.Total() != 6 || len(entries) != 5 || len(relations) != 1 || relations[0].Where != filepath.Join(dir, "in.jsonl")+":2" {
		t.Fatalf("total %d, entries %d, relations %+v", src.Total(), len(entries), relations)
	}
	for i, wantErr := range []bool{false, true, true, true, false} {
		if (entries[i].Err != nil) != wantErr {
			t.Errorf("entry %s: err %v, want error %v", entries[i].Where, entries[i].Err, wantErr)
		}
	}
}

// Goal and draft records are read in the relations phase (they name memories); each must hold
// its object.
func TestJSONLGoalAndDraftRecords(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in.jsonl": `{"type":"goal","goal":{"id":"g1","text":"report","kind":"time","status":"open","due_at":"2026-01-01T00:00:00Z"}}
{"type":"draft","draft":{"id":"d1","text":"Lisa zieht um.","confidence":0.6,"status":"draft","extractor":"rules","entities":[{"type":"person","id":"lisa"}]}}
{"type":"memory","id":"a","content":"A"}
{"type":"goal","draft":{"id":"d2","text":"x"}}
{"type":"draft"}
`})
	src, err := OpenJSONL(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	entries, after := items(t, src)
	if len(entries) != 3 || len(after) != 2 {
		t.Fatalf("entries %d, after entries %d", len(entries), len(after))
	}
	if after[0].Err != nil || after[0].Record.Goal == nil || after[0].Record.Goal.DueAt == nil ||
		after[1].Err != nil || after[1].Record.Draft == nil || after[1].Record.Draft.Entities[0].ID != "lisa" {
		t.Fatalf("goal and draft records %+v", after)
	}
	// A goal record holding a draft, and a draft without its object, are errors (read as entries).
	if entries[1].Err == nil || entries[2].Err == nil {
		t.Fatalf("malformed records read without error: %+v", entries[1:])
	}
}

// fakeTarget records the batches and commits the cursor like the graph does; failAt makes the
// write of that batch (1-based, counting all writes) fail as a batch.
type fakeTarget struct {
	cursor  map[string]int
	batches [][]string
	writes  int
	failAt  int
}

func (f *fakeTarget) ImportCursor(_ context.Context, key string) (int, error) {
	return f.cursor[key], nil
}

func (f *fakeTarget) write(recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	f.writes++
	if f.writes == f.failAt {
		return nil, errors.New("alpha went away")
	}
	var ids []string
	res := make([]knowmind.ItemResult, len(recs))
	for i, r := range recs {
		ids = append(ids, r.ID+r.From)
		res[i] = knowmind.ItemResult{Status: knowmind.ItemIndexed, ID: r.ID}
		if r.Content == "dup" {
			res[i].Status = knowmind.ItemUnchanged
		}
	}
	f.batches = append(f.batches, ids)
	f.cursor[cur.Key] = cur.Done
	return res, nil
}

func (f *fakeTarget) WriteEntries(_ context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	return f.write(recs, cur)
}

func (f *fakeTarget) WriteRelations(_ context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	return f.write(recs, cur)
}

// Batches never mix entries and relations; a failed batch stops the import, and running it again
// resumes after the last committed batch without writing anything twice.
func TestImportBatchesAndResume(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in.jsonl": `{"type":"memory","id":"m1","content":"1"}
{"type":"relation","from":"r1","to":"m1","rel_type":"REFERENCES"}
{"type":"memory","id":"m2","content":"dup"}
{"type":"memory","id":"m3","content":"3"}
broken
{"type":"memory","id":"m4","content":"4"}
{"type":"memory","id":"m5","content":"5"}
{"type":"relation","from":"r2","to":"m1","rel_type":"REFERENCES"}
`})
	src, err := OpenJSONL(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tgt := &fakeTarget{cursor: map[string]int{}, failAt: 3}
	var seen []Progress
	sum, err := Import(context.Background(), src, tgt, Options{Batch: 2, Progress: func(p Progress) { seen = append(seen, p) }})
	if err == nil || sum.Done != 4 || tgt.cursor[src.Key()] != 4 {
		t.Fatalf("first run: err %v, %+v, cursor %d; want the third batch to fail after 4 done", err, sum.Progress, tgt.cursor[src.Key()])
	}
	if len(seen) != 2 || seen[1].Done != 4 || seen[1].Total != 8 {
		t.Errorf("progress %+v", seen)
	}
	sum, err = Import(context.Background(), src, tgt, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"m1", "m2"}, {"m3"}, {"m4", "m5"}, {"r1", "r2"}}
	if !slices.EqualFunc(tgt.batches, want, slices.Equal) {
		t.Errorf("batches %q, want %q", tgt.batches, want)
	}
	if sum.Resumed != 4 || sum.Done != 8 || sum.Written != 4 || sum.Unchanged != 0 || sum.Failed != 0 {
		t.Errorf("second run %+v", sum.Progress)
	}
	// From scratch (a new target): the broken line is refused and named, the rest written.
	sum, err = Import(context.Background(), src, &fakeTarget{cursor: map[string]int{}}, Options{Batch: 100})
	if err != nil || sum.Written != 6 || sum.Unchanged != 1 || sum.Failed != 1 || !strings.HasSuffix(sum.Failures[0].Where, ":5") {
		t.Errorf("fresh run: %v %+v %+v", err, sum.Progress, sum.Failures)
	}
	if _, err := Import(context.Background(), src, tgt, Options{Batch: knowmind.MaxImportBatchSize + 1}); knowmind.ErrorCode(err) != knowmind.EINVALID {
		t.Errorf("oversized batch: %v", err)
	}
}

// A vault's file that is a symbolic link out of the folder is refused without being read, and
// the import's summary counts it; a link to a note inside the folder imports as that note.
func TestMarkdownRefusesSymlinksOut(t *testing.T) {
	outside := writeFiles(t, map[string]string{"secret.txt": "Streng geheim: kontonummer", "Fremd/x.md": "# Fremd"})
	dir := writeFiles(t, map[string]string{"Inside.md": "Innen. [[leak]]"})
	for link, target := range map[string]string{
		"leak.md":        filepath.Join(outside, "secret.txt"),
		"Nah.md":         filepath.Join(dir, "Inside.md"),
		"relative.md":    "../" + filepath.Base(outside) + "/secret.txt",
		"Fremd":          filepath.Join(outside, "Fremd"), // a folder link: never walked into
		"Sub/chained.md": filepath.Join(dir, "leak.md"),
	} {
		p := filepath.Join(dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	src, err := OpenMarkdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := items(t, src)
	refused := map[string]bool{}
	for _, e := range entries {
		if strings.Contains(e.Record.Content, "geheim") {
			t.Errorf("%s imported the content of a file outside the folder", e.Where)
		}
		if errors.Is(e.Err, errOutside) {
			refused[e.Where] = true
		} else if e.Err != nil {
			t.Errorf("%s: %v", e.Where, e.Err)
		}
	}
	if len(refused) != 3 || !refused["leak.md"] || !refused["relative.md"] || !refused["Sub/chained.md"] {
		t.Errorf("refused %v, want leak.md, relative.md, Sub/chained.md", refused)
	}
	sum, err := Import(context.Background(), src, &fakeTarget{cursor: map[string]int{}}, Options{Batch: 10})
	if err != nil || sum.Failed != 3 || len(sum.Failures) != 3 || sum.Failures[0].Err != errOutside {
		t.Fatalf("summary %+v, %v: want the 3 links out counted as refused", sum, err)
	}
	if len(entries) != 5 {
		t.Errorf("%d notes, want Inside, Nah and the 3 refused (Fremd/ is not walked)", len(entries))
	}
}
