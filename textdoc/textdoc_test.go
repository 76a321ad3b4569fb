package textdoc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind/bm25"
)

func TestParseVector(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []float32
		err  bool
	}{
		{`[0.5, -1, 2e-3]`, []float32{0.5, -1, 0.002}, false},
		{`"[0.5,-1,2e-3]"`, []float32{0.5, -1, 0.002}, false},
		{`null`, nil, false},
		{`[]`, []float32{}, false},
		{`[0.5, x]`, nil, true},
		{`{"a":1}`, nil, true},
	} {
		got, err := ParseVector([]byte(c.in))
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("ParseVector(%s) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// memory decodes a Memory from the JSON the store answers.
func memory(t *testing.T, js string) Memory {
	t.Helper()
	var m Memory
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func words(_, text string) ([]string, int) {
	f := strings.Fields(strings.ToLower(text))
	return f, len(f)
}

func TestSources(t *testing.T) {
	m := memory(t, `{"Memory.id":"m1","Memory.chunks":[{"p":0,"de":"Hallo Welt"},{"p":3,"en":"hello world"}]}`)
	want := []bm25.Source{{ID: "m1#0", Lang: "de", Text: "Hallo Welt"}, {ID: "m1#3", Lang: "", Text: "hello world"}}
	if got := m.Sources(); !slices.Equal(got, want) {
		t.Fatalf("Sources = %+v, want %+v", got, want)
	}
	if DocID("m1", 12) != "m1#12" {
		t.Fatalf("DocID = %q", DocID("m1", 12))
	}
}

func TestAnalyseStoredVectors(t *testing.T) {
	m := memory(t, `{"Memory.id":"m1","Memory.title":"Der Titel","Memory.chunks":[
		{"p":0,"de":"eins zwei","uid":"0x2a","v":[1,2]},
		{"p":1,"en":"three","uid":"0x2b","v":"[3, 4]"},
		{"p":2,"en":"four","uid":"0x2c","v":[5, "x"]},
		{"p":3,"en":"five six seven"}]}`)
	docs := m.Analyse(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, words)
	if len(docs) != 4 {
		t.Fatalf("%d docs, want 4", len(docs))
	}
	d := docs[0]
	if d.ID != "m1#0" || d.Lang != "de" || d.UID != 0x2a || d.Length != 2 || !slices.Equal(d.Tokens, []string{"eins", "zwei"}) ||
		!slices.Equal(d.Title, []string{"der", "titel"}) || !slices.Equal(d.Vec, []float32{1, 2}) {
		t.Errorf("doc 0 = %+v", d)
	}
	if d := docs[1]; d.UID != 0x2b || d.Lang != "" || !slices.Equal(d.Vec, []float32{3, 4}) {
		t.Errorf("doc 1 = %+v", d)
	}
	if d := docs[2]; d.UID != 0x2c || d.Vec != nil || d.Length != 1 {
		t.Errorf("doc 2 (unparsable vector) = %+v, want the text without a vector", d)
	}
	if d := docs[3]; d.UID != 0 || d.Vec != nil || d.Length != 3 {
		t.Errorf("doc 3 (no uid) = %+v", d)
	}
}

type passages struct {
	texts []string
	err   error
}

func (p *passages) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	p.texts = append(p.texts, texts...)
	if p.err != nil {
		return nil, p.err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s))}
	}
	return out, nil
}

func TestAnalyseRecomputes(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := memory(t, `{"Memory.id":"m1","Memory.chunks":[
		{"p":0,"en":"abc","uid":"0x1","e":1,"v":[9]},
		{"p":1,"en":"abcde","uid":"0x2"},
		{"p":2,"en":"ab","e":1}]}`)
	emb := &passages{}
	docs := m.Analyse(context.Background(), log, emb, words)
	// Only chunks with a uid and a stored vector are embedded; the stored vector is not read.
	if !slices.Equal(emb.texts, []string{"abc"}) {
		t.Fatalf("embedded %q, want [abc]", emb.texts)
	}
	if !slices.Equal(docs[0].Vec, []float32{3}) || docs[1].Vec != nil || docs[2].Vec != nil {
		t.Fatalf("vectors %v %v %v", docs[0].Vec, docs[1].Vec, docs[2].Vec)
	}
	docs = m.Analyse(context.Background(), log, &passages{err: errors.New("down")}, words)
	if docs[0].Vec != nil || docs[0].Length != 1 {
		t.Fatalf("a failing embedder: doc 0 = %+v, want the text without a vector", docs[0])
	}
}

func TestTokenCache(t *testing.T) {
	var c TokenCache
	calls := 0
	analyze := func(lang, text string) ([]string, int) {
		calls++
		return words(lang, text)
	}
	toks, n := c.Analyze("0x1", "", "a b c", analyze)
	if n != 3 || len(toks) != 3 || calls != 1 {
		t.Fatalf("first = %v %d (calls %d)", toks, n, calls)
	}
	// A chunk's text never changes: the uid alone finds the entry.
	if toks, n = c.Analyze("0x1", "", "ignored", analyze); n != 3 || calls != 1 {
		t.Fatalf("cached = %v %d (calls %d)", toks, n, calls)
	}
	if c.Bytes() <= 0 {
		t.Fatal("Bytes of a filled cache is 0")
	}
	// Too long to be worth a slot: analysed every time.
	long := strings.Repeat("w ", MaxCachedTokens/100+1)
	c.Analyze("0x2", "", long, analyze)
	c.Analyze("0x2", "", long, analyze)
	if calls != 3 {
		t.Fatalf("a long text was cached (calls %d)", calls)
	}
	c.Clear()
	if c.Bytes() != 0 {
		t.Fatalf("Bytes after Clear = %d", c.Bytes())
	}
	c.Analyze("0x1", "", "a b c", analyze)
	if calls != 4 {
		t.Fatalf("Clear kept an entry (calls %d)", calls)
	}
}

// TestTokenCacheEvicts: past MaxCachedTokens the oldest entries go first.
func TestTokenCacheEvicts(t *testing.T) {
	var c TokenCache
	per := MaxCachedTokens / 100 // the longest analysis it keeps
	text := strings.Repeat("w ", per)
	for i := range 101 {
		c.Analyze(strings.Repeat("u", i+1), "", text, words)
	}
	if c.total > MaxCachedTokens {
		t.Fatalf("holds %d tokens, bound %d", c.total, MaxCachedTokens)
	}
	if _, ok := c.tokens["u"]; ok {
		t.Fatal("the oldest entry survived")
	}
	if _, ok := c.tokens[strings.Repeat("u", 101)]; !ok {
		t.Fatal("the newest entry was evicted")
	}
	if len(c.tokens) != 100 {
		t.Fatalf("%d entries, want 100", len(c.tokens))
	}
}

func TestStoredLang(t *testing.T) {
	for in, want := range map[string]string{"de": "de", "en": "", "": "", "fr": ""} {
		if got := StoredLang(in); got != want {
			t.Errorf("StoredLang(%q) = %q, want %q", in, got, want)
		}
	}
}
