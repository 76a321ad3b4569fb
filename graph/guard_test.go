package graph

import (
	"strings"
	"testing"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/chunk"
)

func TestGuardReadsIndexesFromSchema(t *testing.T) {
	for pred, want := range map[string]indexKinds{
		"Chunk.text":   {words: true},
		"Memory.title": {whole: true, words: true},
		"Memory.tags":  {whole: true},
		"Entity.name":  {whole: true, words: true},
		"Note.path":    {whole: true},
		"Token.hash":   {whole: true},
	} {
		if got := indexedPredicates[pred]; got != want {
			t.Errorf("%s: %+v, want %+v", pred, got, want)
		}
	}
	for _, pred := range []string{"Memory.content", "Chunk.heading", "Revision.body", "Goal.text"} {
		if _, ok := indexedPredicates[pred]; ok {
			t.Errorf("%s has no index but is guarded", pred)
		}
	}
}

// Every chunk chunk/ can make passes the guard, whatever runes it is made of: the guard
// never refuses what the chunker produced.
func TestGuardAdmitsEveryChunk(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("\U0001F600", 100_000),
		strings.Repeat("\uFDFA", 100_000),
		"# " + strings.Repeat("b", 70_000),
	} {
		for _, c := range chunk.Split(text, chunk.Options{}) {
			if err := checkIndexedValue("Chunk.text", "de", c.Text); err != nil {
				t.Fatalf("chunk of %d bytes refused: %v", len(c.Text), err)
			}
		}
	}
}

// The bound holds against Dgraph's own analysis (bm25 runs the same bleve chain): no token
// is longer than the longest run of non-space characters times tokenGrowth.
func TestGuardBoundCoversDgraphTokens(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("\uFDFA", 2000),
		"a" + strings.Repeat("\u0301", 3000),
		"x\u200b" + strings.Repeat("\u00ad", 2000) + " y",
		strings.Repeat("Ⱥ", 3000),
		"https://example.org/" + strings.Repeat("a.b:c'd_", 500),
		strings.Repeat("知識", 1000),
	} {
		checkTokensBounded(t, text)
	}
}

func FuzzGuardBound(f *testing.F) {
	f.Add("\uFDFA\uFDFA a\u0301\u0301")
	f.Add("ǅ İ K ﷺ")
	f.Fuzz(func(t *testing.T, text string) { checkTokensBounded(t, text) })
}

func checkTokensBounded(t *testing.T, text string) {
	t.Helper()
	run := longestRun(text)
	for _, lang := range []string{"", "de"} {
		for _, tok := range bm25.Analyze(lang, text) {
			if len(tok) > run*tokenGrowth {
				t.Fatalf("token of %d bytes from a longest run of %d: %q", len(tok), run, tok)
			}
		}
	}
}

func TestGuardRefusesOverlongValues(t *testing.T) {
	big := strings.Repeat("b", 70_000)
	for name, m := range map[string]*api.Mutation{
		"json title":           {SetJson: []byte(`{"uid":"_:m","Memory.title":"` + big + `"}`)},
		"json nested tag list": {SetJson: []byte(`[{"uid":"_:m","Memory.chunks":[{"uid":"_:c","Memory.tags":["a","` + big + `"]}]}]`)},
		"json text word":       {SetJson: []byte(`{"uid":"_:c","Chunk.text@de":"x ` + strings.Repeat("b", 6000) + `"}`)},
		"nquads":               {SetNquads: []byte(`<0x1> <Memory.kind> "memory" .` + "\n" + `_:c <Chunk.text> "` + big + `"@de .`)},
		"nquads upsert":        {SetNquads: []byte(`uid(u) <Note.path> "` + big + `" .`)},
		"nquads delete":        {DelNquads: []byte(`<0x1> <Entity.name> "` + big + `" .`)},
		"nquad proto":          {Set: []*api.NQuad{{Subject: "_:a", Predicate: "Entity.aliases", ObjectValue: &api.Value{Val: &api.Value_StrVal{StrVal: big}}}}},
	} {
		err := checkMutations([]*api.Mutation{m})
		if knowmind.ErrorCode(err) != knowmind.EINVALID {
			t.Errorf("%s: %v, want an invalid-params refusal", name, err)
		}
	}
}

func TestGuardPassesOrdinaryWrites(t *testing.T) {
	content := strings.Repeat("b", 500_000) // not indexed: any length
	for name, m := range map[string]*api.Mutation{
		"json":           {SetJson: []byte(`{"uid":"_:m","Memory.title":"T","Memory.content":"` + content + `","Memory.tags":["a"],"Memory.chunks":[{"Chunk.text@de":"ein Text","Chunk.position":0}]}`)},
		"json facets":    {SetJson: []byte(`{"uid":"0x1","FOR_CLIENT":{"uid":"0x2"},"FOR_CLIENT|note":"` + content + `"}`)},
		"nquads":         {SetNquads: []byte("<0x1> <Memory.title> \"a \\\"quoted\\\" title.\" .\n_:c <Chunk.text> \"Satz.\\nNoch einer.\"@de .\n_:c <Chunk.position> \"3\"^^<xs:int> .\nuid(u) <REL> <0x2> (since=2024-01-01T00:00:00Z, note=\"a ) b\") .\n<0x1> <Memory.valid_to> \"2024-01-01T00:00:00Z\".\n<0x1> * * .")},
		"nquads content": {SetNquads: []byte(`<0x1> <Memory.content> "` + content + `" .`)},
	} {
		if err := checkMutations([]*api.Mutation{m}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := checkNQuads([]byte(`<0x1> <Memory.title> "unterminated .`)); err == nil {
		t.Error("an unreadable N-Quad passed")
	}
}
