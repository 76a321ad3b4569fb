package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func newHash(t testing.TB) Embedder {
	t.Helper()
	e, err := New(Config{}) // the zero Config is the offline default
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func embedOne(t testing.TB, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.EmbedQuery(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestHashDefaults(t *testing.T) {
	e := newHash(t)
	if e.Dim() != 384 || e.ID() != "hash-v1-384" || e.Provider() != "knowmind-hash" {
		t.Fatalf("Dim/ID/Provider = %d/%q/%q", e.Dim(), e.ID(), e.Provider())
	}
	e256, err := New(Config{Provider: "hash", Dim: 256})
	if err != nil {
		t.Fatal(err)
	}
	if e256.ID() != "hash-v1-256" || len(embedOne(t, e256, "Urlaubsantrag")) != 256 {
		t.Fatalf("Dim 256: ID %q", e256.ID())
	}
}

func TestHashVectors(t *testing.T) {
	e := newHash(t)
	texts := []string{
		"Einarbeitung neuer Mitarbeiter",
		"Der Urlaubsantrag wird im Personalportal gestellt.",
		"Onboarding of new employees starts on Monday.",
		"42",
		"",
	}
	batch, err := e.EmbedPassages(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		v := batch[i]
		if len(v) != 384 {
			t.Fatalf("%q: %d dims", text, len(v))
		}
		if n := norm(v); math.Abs(n-1) > 1e-6 {
			t.Errorf("%q: norm %v", text, n)
		}
		// Deterministic, and a batch gives what single calls give.
		assertClose(t, embedOne(t, e, text), v, 0, text)
	}
}

func TestHashSimilarity(t *testing.T) {
	e := newHash(t)
	for _, tc := range []struct{ text, similar, unrelated string }{
		{"Einarbeitung neuer Mitarbeiter", "Einarbeitungen für neue Mitarbeiter", "Tarif Business Plätze"},
		{"Onboarding new employees", "onboarding of a new employee", "invoice payment terms"},
		{"Urlaubsantrag stellen", "Wie stelle ich einen Urlaubsantrag?", "Serverraum Klimaanlage defekt"},
		{"Mitarbeitereinarbeitung", "Einarbeitung der Mitarbeiter", "Quartalszahlen Umsatz"}, // compounds share n-grams
	} {
		a, s, u := embedOne(t, e, tc.text), embedOne(t, e, tc.similar), embedOne(t, e, tc.unrelated)
		cs, cu := cosine(a, s), cosine(a, u)
		t.Logf("%q: similar %.3f, unrelated %.3f", tc.text, cs, cu)
		if cs <= cu+0.2 {
			t.Errorf("%q: cos to %q = %.3f, to %q = %.3f; want a clear gap", tc.text, tc.similar, cs, tc.unrelated, cu)
		}
	}
}

func TestHashFolding(t *testing.T) {
	e := newHash(t)
	for _, pair := range [][2]string{
		{"Müller", "Mueller"},
		{"MÜLLER", "mueller"},
		{"Straße", "Strasse"},
		{"Café Crème", "cafe creme"},
		{"Größe", "groesse"},
		{"Mitarbeiter", "mitarbeiter!"}, // case and punctuation
	} {
		assertClose(t, embedOne(t, e, pair[0]), embedOne(t, e, pair[1]), 0, pair[0]+" = "+pair[1])
	}
	// Inflections share the stem feature, so they are close but not equal.
	if c := cosine(embedOne(t, e, "Plätze"), embedOne(t, e, "Platz")); c < 0.3 {
		t.Errorf("cos(Plätze, Platz) = %.3f", c)
	}
	if c := cosine(embedOne(t, e, "Einarbeitungen"), embedOne(t, e, "Einarbeitung")); c < 0.7 {
		t.Errorf("cos(Einarbeitungen, Einarbeitung) = %.3f", c)
	}
}

func TestHashStem(t *testing.T) {
	// Stems need not be words; inflected forms must meet.
	for _, group := range [][]string{
		{"einarbeitung", "einarbeitungen"},
		{"mitarbeiter", "mitarbeitern"},
		{"neue", "neuer", "neuen", "neu"},
		{"platz", "plaetze"},
		{"mueller", "muller"},
		{"company", "companies"},
		{"employee", "employees"},
		{"plan", "plans", "planned", "planning"},
	} {
		want := string(unfoldUmlauts(stem([]byte(group[0]))))
		for _, w := range group[1:] {
			if got := string(unfoldUmlauts(stem([]byte(w)))); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, got, group[0], want)
			}
		}
	}
	for _, w := range []string{"business", "status", "analysis", "der", "2024"} {
		if got := string(stem([]byte(w))); got != w {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func TestHashEmptyAndPunctuation(t *testing.T) {
	e := newHash(t)
	empty := embedOne(t, e, "")
	if n := norm(empty); math.Abs(n-1) > 1e-6 {
		t.Fatalf("empty text: norm %v, want a unit vector (a zero vector breaks cosine search)", n)
	}
	for _, text := range []string{"   ", "?!… —", "\x00\xff"} {
		assertClose(t, embedOne(t, e, text), empty, 0, fmt.Sprintf("%q", text))
	}
	if c := cosine(empty, embedOne(t, e, "Urlaub")); c > 0.5 {
		t.Errorf("empty text is close (%.3f) to a real word", c)
	}
}

func TestHashHugeInput(t *testing.T) {
	e := newHash(t)
	var b strings.Builder
	for i := 0; b.Len() < 1_000_000; i++ {
		fmt.Fprintf(&b, "wort%d Müller ", i) // ~100k distinct words plus one repeated
	}
	oneWord := strings.Repeat("x", 1_000_000)
	for name, text := range map[string]string{"many words": b.String(), "one word": oneWord} {
		start := time.Now()
		v := embedOne(t, e, text)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: took %v", name, took)
		}
		if n := norm(v); math.Abs(n-1) > 1e-6 {
			t.Errorf("%s: norm %v", name, n)
		}
	}
}

func TestHashAllocations(t *testing.T) {
	e := newHash(t)
	ctx := context.Background()
	text := benchTexts(1)[0]
	e.EmbedQuery(ctx, text) // warm the pool
	allocs := testing.AllocsPerRun(100, func() { e.EmbedQuery(ctx, text) })
	// The result vector plus one string per distinct word.
	if allocs > 60 {
		t.Errorf("%v allocations per 40-word text", allocs)
	}
}

func TestHashCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newHash(t).EmbedPassages(ctx, []string{"a"}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}
