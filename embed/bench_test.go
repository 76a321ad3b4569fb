package embed

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// Benchmark workload: batches of 32 texts of 40 words each, drawn
// deterministically from a mixed German/English business vocabulary;
// reported as embeddings/s (texts per second).
//
//	go test ./embed/ -run '^$' -bench . -benchtime 3s
//
// BenchmarkHugotTiny runs the real hugot pipeline (tokenizer, Go backend,
// mean pooling, normalisation) on the tiny one-Gather model: it measures the
// pipeline's overhead, not a transformer. Real models are far slower (README,
// "Embeddings").
const (
	benchBatch = 32
	benchWords = 40
)

var benchVocabulary = strings.Fields(`Einarbeitung neuer Mitarbeiter Urlaubsantrag Personalportal
	Tarif Business Plätze Kunde Vertrag Rechnung Zahlungsziel Projekt Meilenstein Wiki Handbuch
	Datenschutz Freigabe Abteilung Leitung Besprechung Protokoll Entscheidung Termin Budget
	onboarding employee invoice payment terms customer contract release deadline meeting notes
	decision owner team quarter revenue forecast roadmap backlog ticket incident server
	der die das und für mit von im auf the of and to for with on in is are`)

func benchTexts(n int) []string {
	rng := rand.New(rand.NewPCG(7, 7))
	texts := make([]string, n)
	for i := range texts {
		words := make([]string, benchWords)
		for j := range words {
			words[j] = benchVocabulary[rng.IntN(len(benchVocabulary))]
		}
		texts[i] = strings.Join(words, " ")
	}
	return texts
}

func benchmarkEmbedder(b *testing.B, e Embedder) {
	ctx := context.Background()
	texts := benchTexts(benchBatch)
	if _, err := e.EmbedPassages(ctx, texts); err != nil { // warm caches and compiled shapes
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.EmbedPassages(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "embeddings/s")
}

func BenchmarkHash(b *testing.B) {
	benchmarkEmbedder(b, newHash(b))
}

func BenchmarkHugotTiny(b *testing.B) {
	benchmarkEmbedder(b, newTinyHugot(b, "tiny-bench", Config{Batch: benchBatch}))
}
