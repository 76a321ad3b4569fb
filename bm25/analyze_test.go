package bm25

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		lang, text string
		want       []string
	}{
		// German: stop words go, the light stemmer folds umlauts and cuts inflections.
		{"de", "Einarbeitungen", []string{"einarbeitung"}},
		{"de", "Einarbeitung", []string{"einarbeitung"}},
		{"de", "Die Einarbeitung der neuen Mitarbeiterinnen dauert länger als geplant.",
			[]string{"einarbeitung", "neu", "mitarbeiterinn", "dauert", "lang", "geplant"}},
		{"de", "Kinder, Kindern, Kindes, Kind", []string{"kind", "kind", "kind", "kind"}},
		{"de", "Häuser Bäume Straßen", []string{"haus", "baum", "straß"}}, // ß stays
		{"de-DE", "Häuser", []string{"haus"}},
		// The light stemmer does not know strong verbs (Dgraph's "laufend" does not find "läuft").
		{"de", "laufend läuft", []string{"laufend", "lauft"}},
		{"de", "aber alle als also", nil},
		// English (and untagged): Porter stemmer, English stop words, apostrophes kept.
		{"en", "Caroline went to the LGBTQ support group",
			[]string{"carolin", "went", "lgbtq", "support", "group"}},
		{"", "Caroline went to the LGBTQ support group",
			[]string{"carolin", "went", "lgbtq", "support", "group"}},
		{"en", "running runs connections connected", []string{"run", "run", "connect", "connect"}},
		{"en", "I'm going to the store", []string{"go", "store"}},          // "i'm" is a stop word
		{"en", "runner's kids' books", []string{"runner'", "kid", "book"}}, // "'s" survives in part
		// Under "de" English words only lose German stop words and endings.
		{"de", "the supported connections", []string{"the", "supported", "connection"}},
		// Base analysis: NFKC folds ligatures and full-width forms, the tokenizer splits hyphens.
		{"en", "ﬁnancial ＡＢＣ e-mail", []string{"financi", "abc", "e", "mail"}},
		{"en", "", nil},
		{"en", "... !!! ---", nil},
	}
	for _, tt := range tests {
		got := Analyze(tt.lang, tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Analyze(%q, %q) = %q, want %q", tt.lang, tt.text, got, tt.want)
		}
	}
}

func TestAnalyzeStemsAlike(t *testing.T) {
	pairs := []struct{ lang, a, b string }{
		{"de", "Einarbeitungen", "Einarbeitung"},
		{"de", "Projekten", "Projekt"},
		{"de", "Verantwortlichkeiten", "Verantwortlichkeit"},
		{"de", "Büchern", "Buch"},
		{"en", "painted", "painting"},
		{"en", "agencies", "agency"},
	}
	for _, p := range pairs {
		a, b := Analyze(p.lang, p.a), Analyze(p.lang, p.b)
		if len(a) != 1 || !slices.Equal(a, b) {
			t.Errorf("%s: %q → %q and %q → %q, want one equal stem", p.lang, p.a, a, p.b, b)
		}
	}
}

// TestTermsMatchDgraph compares Terms with the tokens Dgraph v25.2.0 itself produced for the same
// lines (testdata/dgraph_tokens.jsonl, made by testdata/dgraphtok). Point BM25_DGRAPH_TOKENS at
// another file made the same way to check a larger corpus.
func TestTermsMatchDgraph(t *testing.T) {
	path := "testdata/dgraph_tokens.jsonl"
	if p := os.Getenv("BM25_DGRAPH_TOKENS"); p != "" {
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	var checked, failed int
	for lines.Scan() {
		var want struct {
			Lang, Text string
			Tokens     []string
		}
		if err := json.Unmarshal(lines.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		checked++
		got := Terms(want.Lang, want.Text)
		if len(want.Tokens) == 0 {
			want.Tokens = nil
		}
		if !slices.Equal(got, want.Tokens) {
			failed++
			if failed <= 20 {
				t.Errorf("Terms(%q, %q)\n got %q\nwant %q (Dgraph)", want.Lang, want.Text, got, want.Tokens)
			}
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no lines in", path)
	}
	t.Logf("%d of %d (lang, text) pairs match Dgraph", checked-failed, checked)
}

// Analyze is called from many goroutines at once (a full load analyses on every core): the
// shared bleve analyzers and filters must keep no state between calls. Run with -race.
func TestAnalyzeConcurrent(t *testing.T) {
	f, err := os.Open("testdata/dgraph_tokens.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type sample struct{ Lang, Text string }
	var samples []sample
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		var s sample
		if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s)
	}
	if len(samples) == 0 {
		t.Fatal("no samples")
	}
	want := make([][]string, len(samples))
	for i, s := range samples {
		want[i] = Analyze(s.Lang, s.Text)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for r := range 3 {
				for i := range samples {
					i := (i + w*len(samples)/8 + r) % len(samples) // each worker starts elsewhere
					if got := Analyze(samples[i].Lang, samples[i].Text); !slices.Equal(got, want[i]) {
						t.Errorf("concurrent Analyze(%q, %q) = %q, want %q", samples[i].Lang, samples[i].Text, got, want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestAnalysisLang(t *testing.T) {
	for tag, want := range map[string]string{"": "en", "en": "en", "EN-us": "en", "de": "de", "de-AT": "de", "de_CH": "de", "fr": "fr"} {
		if got := AnalysisLang(tag); got != want {
			t.Errorf("AnalysisLang(%q) = %q, want %q", tag, got, want)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	text := "Die Einarbeitung der neuen Mitarbeiterinnen dauert länger als geplant, weil das Team im Urlaub ist und die Dokumentation fehlt."
	for b.Loop() {
		Analyze("de", text)
	}
}
