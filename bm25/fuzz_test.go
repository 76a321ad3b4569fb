package bm25_test

import (
	"testing"
	"unicode/utf8"

	"github.com/knowmind/knowmind/bm25"
)

// FuzzAnalyze: the analysers take any text without panicking and give
// non-empty, valid UTF-8 terms for valid input.
func FuzzAnalyze(f *testing.F) {
	f.Add("Die Einarbeitungen laufen jährlich; QM-Schulung für Müller GmbH.")
	f.Add("The onboarding process starts on day one, doesn't it?")
	f.Add("ǅ ﬁ ß ẞ İ ı \u0301e\u0308 日本語 🙂 \x00\xff")
	f.Fuzz(func(t *testing.T, text string) {
		for _, lang := range []string{"de", "", "en"} {
			for _, term := range append(bm25.Analyze(lang, text), bm25.Terms(lang, text)...) {
				if term == "" || (utf8.ValidString(text) && !utf8.ValidString(term)) {
					t.Fatalf("lang %q: bad term %q", lang, term)
				}
			}
		}
	})
}
